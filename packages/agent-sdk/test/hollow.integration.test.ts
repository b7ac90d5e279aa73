import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHollowFleet } from "../src/hollow.js";
import { EnrollResponder } from "./support/enroll-responder.js";
import { TestNatsServer } from "./support/nats-server.js";
import { TestPlatform } from "./support/platform.js";
import { waitFor } from "./support/wait.js";

let server: TestNatsServer;
let nc: NatsConnection;

beforeAll(async () => {
  server = await TestNatsServer.create();
  await server.start();
  nc = await server.connect();
  await server.createUpStream(nc);
});
afterAll(async () => {
  await nc.close();
  await server.destroy();
});

describe("hollow mode", () => {
  it("runs 200 enrolled agents in one process, each on its own connection, all heartbeating", async () => {
    const responder = new EnrollResponder(nc);
    responder.start();
    const platform = new TestPlatform(nc, { hb: 1, mx: 30 });
    platform.start();
    const heartbeatsByNode = new Map<string, number>();
    nc.subscribe("ef.up.*.hb", {
      callback: (_error, msg) => {
        const wid = msg.subject.split(".")[2] as string;
        heartbeatsByNode.set(wid, (heartbeatsByNode.get(wid) ?? 0) + 1);
      },
    });
    const before = await server.connections();
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
        (await server.connections()) >= before + 200 ? true : undefined,
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
      (await server.connections()) <= before ? true : undefined,
    );
  });
});
