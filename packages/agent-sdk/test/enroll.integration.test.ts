import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromSeed } from "@nats-io/nkeys";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EnrollmentRejectedError, enroll } from "../src/enroll/enroll.js";
import { credsPath, loadIdentity, parseCreds } from "../src/enroll/identity.js";
import { type RunningNats, waitFor } from "../src/testing.js";
import { testNodeJwt } from "./support/credentials.js";
import { EnrollResponder } from "./support/enroll-responder.js";
import { connectPlatform, startTestNats } from "./support/nats-server.js";

let server: RunningNats;
let nc: NatsConnection;
let stateDir: string;

beforeAll(async () => {
  server = await startTestNats();
  nc = await connectPlatform(server);
});
afterAll(async () => {
  await nc.close();
  await server.stop();
});
beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "agent-sdk-enroll-"));
});
afterEach(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

describe("enrollment client", () => {
  it("waits while pending with the same key, then stores the credentials 0600", async () => {
    const responder = new EnrollResponder(nc, 2);
    responder.start();
    try {
      const identity = await enroll({
        servers: [server.url],
        token: "approve-me",
        name: "gate-1",
        labels: { site: "north" },
        stateDir,
        retry: { baseMs: 100, maxMs: 1_000 },
      });
      expect(responder.requests).toHaveLength(3);
      expect(new Set(responder.requests.map((request) => request.key)).size).toBe(1);
      expect(responder.requests[0]).toMatchObject({
        tok: "approve-me",
        name: "gate-1",
        lab: { site: "north" },
      });
      // Only the public key left the node, and it matches the stored seed.
      const key = responder.requests[0]?.key;
      expect(fromSeed(new TextEncoder().encode(identity.seed)).getPublicKey()).toBe(key);
      expect(identity).toMatchObject({ wid: "n0", org: "o1", jwt: testNodeJwt("n0") });

      const creds = await readFile(credsPath(stateDir), "utf8");
      expect(parseCreds(creds)).toEqual({ jwt: identity.jwt, seed: identity.seed });
      expect((await stat(credsPath(stateDir))).mode & 0o777).toBe(0o600);
      expect(await loadIdentity(stateDir)).toEqual(identity);

      // Enrolled already: no new request.
      const again = await enroll({ servers: [server.url], token: "approve-me", name: "gate-1", stateDir });
      expect(again).toEqual(identity);
      expect(responder.requests).toHaveLength(3);
    } finally {
      responder.stop();
    }
  });

  it("keeps the pending key across a restart of the enrollment", async () => {
    const responder = new EnrollResponder(nc, 2);
    responder.start();
    try {
      const retry = { baseMs: 100, maxMs: 200 };
      const aborted = new AbortController();
      const first = enroll({
        servers: [server.url],
        token: "approve-me",
        name: "gate-2",
        stateDir,
        retry,
        signal: aborted.signal,
      });
      await waitFor("first ask", () => (responder.requests.length === 1 ? true : undefined));
      aborted.abort();
      await expect(first).rejects.toThrow("enrollment aborted");
      expect(await loadIdentity(stateDir)).toBeNull();

      const identity = await enroll({
        servers: [server.url],
        token: "approve-me",
        name: "gate-2",
        stateDir,
        retry,
      });
      const keys = responder.requests.map((request) => request.key);
      expect(keys).toHaveLength(3);
      expect(new Set(keys).size).toBe(1);
      expect(fromSeed(new TextEncoder().encode(identity.seed)).getPublicKey()).toBe(keys[0]);
    } finally {
      responder.stop();
    }
  });

  it("throws a clear error when rejected, storing nothing", async () => {
    const responder = new EnrollResponder(nc);
    responder.start();
    try {
      await expect(
        enroll({ servers: [server.url], token: "reject-me", name: "gate-3", stateDir }),
      ).rejects.toThrow(new EnrollmentRejectedError("enrollment rejected: unknown token"));
      expect(await loadIdentity(stateDir)).toBeNull();
    } finally {
      responder.stop();
    }
  });
});
