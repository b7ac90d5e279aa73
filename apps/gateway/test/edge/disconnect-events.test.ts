import { describe, expect, it } from "vitest";
import { parseDisconnect } from "../../src/edge/liveness/disconnect-watcher.js";

const account = `A${"B".repeat(55)}`;
const other = `A${"C".repeat(55)}`;
const user = `U${"D".repeat(55)}`;
const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/** nats-server's io.nats.server.advisory.v1.client_disconnect, trimmed to what a server sends. */
const event = (client: Record<string, unknown>) => ({
  type: "io.nats.server.advisory.v1.client_disconnect",
  id: "x",
  timestamp: "2026-11-29T15:00:00.5Z",
  server: { name: "site-leaf", id: "N", ver: "2.11.0", seq: 9, time: "2026-11-29T15:00:00.5Z" },
  client: {
    start: "2026-11-29T14:00:00.123456789Z",
    stop: "2026-11-29T15:00:00.123456789Z",
    host: "127.0.0.1",
    id: 12,
    acc: account,
    user,
    name: "edgefleet-hollow n1",
    lang: "nats.js",
    ver: "3.0.0",
    kind: "Client",
    client_type: "nats",
    ...client,
  },
  reason: "Client Closed",
});

describe("parseDisconnect", () => {
  it("reads the node's user, its account and when the server closed the connection", () => {
    const parsed = parseDisconnect(`$SYS.ACCOUNT.${account}.DISCONNECT`, encode(event({})), 42);
    expect(parsed).toEqual({
      ok: true,
      disconnect: {
        user,
        account,
        stoppedAt: new Date("2026-11-29T15:00:00.123Z"),
        heardAt: 42,
        reason: "Client Closed",
      },
    });
  });

  it("refuses an event whose client is of another account than the subject's (a site speaking for another)", () => {
    expect(parseDisconnect(`$SYS.ACCOUNT.${other}.DISCONNECT`, encode(event({})), 0)).toEqual({
      ok: false,
      reason: "foreign_account",
    });
  });

  it("leaves a server's own shutdown alone: its nodes reconnect (a leaf or hub restart)", () => {
    const shutdown = { ...event({}), reason: "Server Shutdown" };
    expect(parseDisconnect(`$SYS.ACCOUNT.${account}.DISCONNECT`, encode(shutdown), 0)).toEqual({
      ok: false,
      reason: "server_shutdown",
    });
    const stale = { ...event({}), reason: "Stale Connection" };
    expect(parseDisconnect(`$SYS.ACCOUNT.${account}.DISCONNECT`, encode(stale), 0)).toMatchObject({
      ok: true,
    });
  });

  it("leaves other connection kinds alone and refuses what is not an event", () => {
    const subject = `$SYS.ACCOUNT.${account}.DISCONNECT`;
    expect(parseDisconnect(subject, encode(event({ kind: "Leafnode" })), 0)).toEqual({
      ok: false,
      reason: "not_a_client",
    });
    for (const bad of [
      new TextEncoder().encode("{not json"),
      encode(event({ user: "bob" })),
      encode(event({ stop: "yesterday" })),
      encode({ client: null }),
    ])
      expect(parseDisconnect(subject, bad, 0)).toEqual({ ok: false, reason: "malformed" });
  });
});
