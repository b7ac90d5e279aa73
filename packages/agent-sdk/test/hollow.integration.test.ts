import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHollowFleet } from "../src/hollow.js";
import { type RunningNats, waitFor } from "../src/testing.js";
import { EnrollResponder } from "./support/enroll-responder.js";
import { connectionCount, connectPlatform, createUpStream, startTestNats } from "./support/nats-server.js";
import { TestPlatform } from "./support/platform.js";

let server: RunningNats;
let nc: NatsConnection;

beforeAll(async () => {
  server = await startTestNats();
  nc = await connectPlatform(server);
  await createUpStream(nc);
});
afterAll(async () => {
  await nc.close();
  await server.stop();
});

describe("hollow mode", () => {
  it("runs 200 enrolled agents in one process, each on its own connection, all heartbeating", async () => {
    const responder = new EnrollResponder(nc);
    responder.start();
    const platform = new TestPlatform(nc, { hb: 1, mx: 30 });
    platform.start();
    const heartbeatsByNode = new Map<string, number>();
    nc.subscribe("ef.up.*.*.hb", {
      callback: (_error, msg) => {
        const wid = msg.subject.split(".")[3] as string;
        heartbeatsByNode.set(wid, (heartbeatsByNode.get(wid) ?? 0) + 1);
      },
    });
    const before = await connectionCount(server);
    const fleet = await startHollowFleet({
      count: 200,
      token: "approve-me",
      servers: [server.url],
      namePrefix: "h",
    });
    try {
      expect(responder.requests).toHaveLength(200);
      expect(new Set(responder.requests.map((request) => request.key)).size).toBe(200);
      await waitFor("200 connections", async () =>
        (await connectionCount(server)) >= before + 200 ? true : undefined,
      );
      await waitFor(
        "two heartbeats from each of the 200 nodes",
        () =>
          heartbeatsByNode.size === 200 && [...heartbeatsByNode.values()].every((count) => count >= 2)
            ? true
            : undefined,
        30_000,
      );
      expect(new Set(platform.hellos.map((hello) => hello.wid)).size).toBe(200);

      // The real protocol down too: a desired app reaches a hollow agent, which "runs" it and acks.
      const wid = fleet.identities[7]?.wid as string;
      platform.change(wid, { put: { app: "demo", ver: "1", spec: { command: ["demo"] } } });
      const agent = fleet.agents[7];
      await waitFor("revision applied by the hollow agent", () =>
        agent?.stats().appliedRevision === 1 ? true : undefined,
      );
    } finally {
      await fleet.stop();
      responder.stop();
      platform.stop();
    }
    await waitFor("connections closed", async () =>
      (await connectionCount(server)) <= before ? true : undefined,
    );
  });
});
