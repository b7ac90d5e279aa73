import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  agentUpSubject,
  createEnrollCurve,
  decodeMessage,
  type EnrollReplyBody,
  encodeMessage,
  type NodeAddress,
  nodeAddressFromJwt,
  nodeInboxPrefix,
  openEnrollReply,
  PROTOCOL_VERSION,
  signEnrollProof,
} from "@edgefleet/agent-sdk/protocol";
import { approveNode, createEnrollmentToken, type Db, revokeNode } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import { type RunningNats, startOperatorModeHub, waitFor } from "@edgefleet/nats-tenancy/testing";
import { createUser, type KeyPair } from "@nats-io/nkeys";
import { connect, credsAuthenticator, jwtAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess, metricValue } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";

// Enrollment end to end: the real gateway process, a real operator-mode hub, real Postgres.
// The "agent" side here speaks the protocol by hand so each bad input can be sent on purpose.

let secrets: TenancySecrets;
let hub: RunningNats;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let enrollClient: NatsConnection;
let organizationId: string;
const credsDir = mkdtempSync(join(tmpdir(), "ef-enroll-"));
const opened: NatsConnection[] = [];

beforeAll(async () => {
  secrets = await createTenancySecrets("enroll-test");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  organizationId = (await db.organization.create({ data: { slug: "enroll-test", name: "Enroll Test" } })).id;
  const file = (name: string, content: string) => {
    writeFileSync(join(credsDir, name), content);
    return join(credsDir, name);
  };
  gateway = await GatewayProcess.start({
    // A small failure budget, so the flood test needs few requests (the rest stay well inside it).
    GATEWAY_ENROLL_FAILURE_BURST: "20",
    GATEWAY_ENROLL_FAILURE_RATE: "5",
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
    GATEWAY_HEALTH_INTERVAL_MS: "500",
  });
  await gateway.waitForReadyz(200);
  await waitFor("enrollment service", async () =>
    gateway.logLines().some((line) => line.service === "enrollment") ? true : undefined,
  );
  enrollClient = await connect({
    servers: hub.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(secrets.enroll.userCreds)),
  });
});

afterAll(async () => {
  await Promise.allSettled([enrollClient?.close(), ...opened.map((nc) => nc.close())]);
  await gateway?.kill();
  await hub?.stop();
  await database?.drop();
  rmSync(credsDir, { recursive: true, force: true });
});

const token = (overrides: Partial<Parameters<typeof createEnrollmentToken>[2]> = {}) =>
  createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(Date.now() + 3_600_000),
    maxUses: 10,
    labels: { site: "plant-7" },
    ...overrides,
  });

/** Sends one request and opens the (sealed) reply with the request's curve key. */
async function requestRaw(
  payload: Uint8Array,
  curve = createEnrollCurve(),
  timeout = 5_000,
): Promise<EnrollReplyBody> {
  const reply = await enrollClient.request("ef.enroll", payload, { timeout });
  const wire = decodeMessage("enrollReply", reply.data);
  if (!wire.ok) throw new Error(`gateway sent an invalid reply: ${wire.reason}`);
  const opened = openEnrollReply(wire.msg, curve);
  if (!opened.ok) throw new Error(`gateway's reply does not open: ${opened.detail}`);
  return opened.msg;
}

/** A well-formed request: one-time curve key, and `signer`'s proof (the node key's own by default). */
function enrollRequest(tok: string, key: KeyPair, name: string, curve: KeyPair, signer = key) {
  return encodeMessage("enrollRequest", {
    v: PROTOCOL_VERSION,
    tok,
    key: key.getPublicKey(),
    name,
    lab: { hw: "rpi4", site: "forged" },
    av: "0.1.0",
    os: "linux",
    arch: "x64",
    xk: curve.getPublicKey(),
    sig: signEnrollProof(signer, tok, curve.getPublicKey()),
  });
}

const enroll = (tok: string, key: KeyPair, name = "gw-1") => {
  const curve = createEnrollCurve();
  return requestRaw(enrollRequest(tok, key, name, curve), curve);
};

/** The subjects an approved reply's credentials name. */
function addressOf(reply: EnrollReplyBody): NodeAddress {
  const address = reply.jwt ? nodeAddressFromJwt(reply.jwt) : null;
  if (!address) throw new Error("not approved");
  return address;
}

async function connectAsNode(reply: EnrollReplyBody, key: KeyPair) {
  if (!reply.jwt) throw new Error("not approved");
  const nc = await connect({
    servers: hub.url,
    authenticator: jwtAuthenticator(reply.jwt, key.getSeed()),
    inboxPrefix: nodeInboxPrefix(addressOf(reply)),
    maxReconnectAttempts: 0,
  });
  opened.push(nc);
  return nc;
}

describe("enrollment through ef.enroll", () => {
  it("exchanges a valid token and the node's public key for working, node-scoped credentials", async () => {
    const { token: secret, id } = await token();
    const key = createUser();
    const reply = await enroll(secret, key);
    expect(reply).toMatchObject({ st: "approved" });
    const node = await db.node.findUniqueOrThrow({ where: { id: reply.nid } });
    expect(node).toMatchObject({
      organizationId,
      name: "gw-1",
      status: "offline",
      publicKey: key.getPublicKey(),
    });
    // The token's labels win over what the agent claims.
    expect(node.labels).toEqual({ hw: "rpi4", site: "plant-7" });
    expect(reply.wid).toBe(node.wireId.toString(36));

    const nc = await connectAsNode(reply, key);
    const platform = await connect({
      servers: hub.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(secrets.platform.userCreds)),
    });
    opened.push(platform);
    // Its credentials name its site (the token's: none, `_`) in every subject (issue 8 #2), and
    // its downlink with a token of its own (#12).
    expect(addressOf(reply)).toMatchObject({ wid: reply.wid, site: "_" });
    expect(addressOf(reply).down).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect((await db.node.findUniqueOrThrow({ where: { id: node.id } })).subjectSite).toBe("_");
    const seen = platform.subscribe(`ef.t.*.up.*.${reply.wid}.hb`, { max: 1 });
    await platform.flush();
    nc.publish(agentUpSubject(addressOf(reply), "hb"), new Uint8Array([1]));
    for await (const msg of seen) expect(msg.subject).toBe(`ef.t.${reply.org}.up._.${reply.wid}.hb`);

    // Asking again with the same key is idempotent: same node, no second use of the token.
    const again = await enroll(secret, key);
    expect(again).toMatchObject({ st: "approved", nid: reply.nid });
    expect((await db.enrollmentToken.findUniqueOrThrow({ where: { id } })).uses).toBe(1);
  });

  it("pushes a new organization's account once for a whole burst of first enrollments", async () => {
    const burstOrg = await db.organization.create({ data: { slug: "burst", name: "Burst" } });
    const { token: secret } = await createEnrollmentToken(db, burstOrg.id, {
      expiresAt: new Date(Date.now() + 60_000),
      maxUses: 8,
    });
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => enroll(secret, createUser(), `b-${i}`)),
    );
    expect(replies.every((reply) => reply.st === "approved")).toBe(true);
    const pushes = gateway
      .logLines()
      .filter((line) => line.msg === "pushed tenant account JWT" && line.organizationId === burstOrg.id);
    expect(pushes).toHaveLength(1);
  });

  it("gives a clashing name a suffix instead of failing", async () => {
    const { token: secret } = await token();
    // "twinkle" shares the prefix but is no clash; the third "twin" takes the next free suffix.
    const replies = [];
    for (const name of ["twinkle", "twin", "twin", "twin"])
      replies.push(await enroll(secret, createUser(), name));
    const names = await db.node.findMany({ where: { id: { in: replies.map((reply) => reply.nid ?? "") } } });
    expect(names.map((node) => node.name).sort()).toEqual(["twin", "twin-2", "twin-3", "twinkle"]);
  });

  it("never lets a token enroll more nodes than its max uses, even concurrently", async () => {
    const { token: secret, id } = await token({ maxUses: 2 });
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) => enroll(secret, createUser(), `race-${i}`)),
    );
    expect(replies.filter((reply) => reply.st === "approved")).toHaveLength(2);
    expect(replies.filter((reply) => reply.st === "rejected").map((reply) => reply.err)).toEqual(
      Array(4).fill("enrollment token has no uses left"),
    );
    expect((await db.enrollmentToken.findUniqueOrThrow({ where: { id } })).uses).toBe(2);
  });

  it("rejects unknown, expired and revoked tokens with a reason, creating nothing", async () => {
    const before = await db.node.count();
    expect(await enroll("efe_not-a-token", createUser())).toMatchObject({
      st: "rejected",
      err: "enrollment token is not valid",
    });
    const expired = await token({ expiresAt: new Date(Date.now() - 1000) });
    expect(await enroll(expired.token, createUser())).toMatchObject({ err: "enrollment token has expired" });
    const revoked = await token();
    await db.enrollmentToken.update({ where: { id: revoked.id }, data: { revokedAt: new Date() } });
    expect(await enroll(revoked.token, createUser())).toMatchObject({ err: "enrollment token was revoked" });
    expect(await db.node.count()).toBe(before);
  });

  it("answers malformed and unknown-version requests with a rejection, and counts them", async () => {
    expect(await requestRaw(new TextEncoder().encode("{not msgpack"))).toMatchObject({ st: "rejected" });
    const futureVersion = enrollRequest("x", createUser(), "n", createEnrollCurve());
    // Bump the encoded `v` (msgpack fixint 1 → 9) without touching anything else.
    const versionAt = futureVersion.indexOf(0xa1) + 2; // after the 1-char key "v"
    futureVersion[versionAt] = 9;
    expect(await requestRaw(futureVersion)).toMatchObject({
      st: "rejected",
      err: "malformed request (unknown_version)",
    });
    const metrics = (await gateway.get("/metrics")).text;
    expect(metricValue(metrics, 'edgefleet_gateway_enrollments_total{outcome="malformed_not_msgpack"}')).toBe(
      1,
    );
    expect(
      metricValue(metrics, 'edgefleet_gateway_enrollments_total{outcome="malformed_unknown_version"}'),
    ).toBe(1);
  });

  it("seals every reply to the requester: a bystander with the public enroll credentials reads nothing (issue 8, #3)", async () => {
    const bystander = await connect({
      servers: hub.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(secrets.enroll.userCreds)),
    });
    opened.push(bystander);
    const overheard: Uint8Array[] = [];
    bystander.subscribe("_INBOX.>", {
      callback: (_error, msg) => {
        overheard.push(msg.data);
      },
    });
    await bystander.flush();
    const { token: secret } = await token();
    const reply = await enroll(secret, createUser(), "overheard");
    expect(reply).toMatchObject({ st: "approved" });
    await waitFor("the reply overheard", async () => (overheard.length > 0 ? true : undefined));
    for (const data of overheard) {
      const wire = decodeMessage("enrollReply", data);
      expect(wire.ok).toBe(true);
      if (wire.ok) expect(Object.keys(wire.msg).sort()).toEqual(["box", "v", "xk"]);
      const text = Buffer.from(data).toString("latin1");
      // (The short wire id could appear by chance in the ciphertext; the JWT and node id cannot.)
      for (const secretPart of [reply.jwt, reply.nid]) expect(text).not.toContain(secretPart);
      // Nor does it open with any key but the requester's.
      if (wire.ok) expect(openEnrollReply(wire.msg, createEnrollCurve()).ok).toBe(false);
    }
  });

  it("refuses a request not signed by the key it names, so nobody probes or claims another's key (issue 8, #12)", async () => {
    const { token: secret, id } = await token();
    const victim = createUser();
    const victimReply = await enroll(secret, victim, "victim");
    expect(victimReply).toMatchObject({ st: "approved" });
    const before = await db.node.count();
    const attacker = createUser();
    const curve = createEnrollCurve();
    // The victim's public key, signed by the attacker's own key.
    const forged = await requestRaw(enrollRequest(secret, victim, "impostor", curve, attacker), curve);
    expect(forged).toEqual({
      v: PROTOCOL_VERSION,
      st: "rejected",
      err: "the request is not signed by the node key it names (proof of possession failed)",
    });
    expect(forged.nid).toBeUndefined();
    expect(await db.node.count()).toBe(before);
    expect((await db.enrollmentToken.findUniqueOrThrow({ where: { id } })).uses).toBe(1);
  });

  it("keeps a node pending until approved, then hands out credentials", async () => {
    const { token: secret } = await token({ requiresApproval: true });
    const key = createUser();
    const pending = await enroll(secret, key, "needs-approval");
    expect(pending).toMatchObject({ st: "pending" });
    expect(pending.jwt).toBeUndefined();
    expect(await approveNode(db, organizationId, pending.nid ?? "")).toBe(true);
    expect(await enroll(secret, key, "needs-approval")).toMatchObject({ st: "approved", nid: pending.nid });
  });

  it("cuts a revoked node off at once and refuses to enroll its key again", async () => {
    const { token: secret } = await token();
    const key = createUser();
    const reply = await enroll(secret, key, "to-revoke");
    const nc = await connectAsNode(reply, key);
    const closed = nc.closed().then(() => "closed");
    expect(await revokeNode(db, organizationId, reply.nid ?? "")).toBe(true);
    await expect(
      Promise.race([closed, new Promise((resolve) => setTimeout(() => resolve("still connected"), 5_000))]),
    ).resolves.toBe("closed");
    await expect(connectAsNode(reply, key)).rejects.toThrow();
    expect(await enroll(secret, key, "to-revoke")).toMatchObject({
      st: "rejected",
      err: "this node was revoked; enroll it again with a new key",
    });
  });
});

describe("enrollment under a flood of bad requests (issue 8, #12)", () => {
  it("answers 'ask again later' without lookups once failures exceed the budget, then recovers", async () => {
    const flood = await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const curve = createEnrollCurve();
        // A loaded machine answers a burst slowly: the flood waits longer than one request does.
        return requestRaw(enrollRequest(`efe_bogus-${i}`, createUser(), `flood-${i}`, curve), curve, 30_000);
      }),
    );
    const throttled = flood.filter((reply) => reply.st === "pending");
    // 20 in flight or failed (this gateway's budget): the rest of the burst is throttled, not looked up.
    expect(throttled.length).toBeGreaterThanOrEqual(30);
    expect(throttled.every((reply) => reply.retry === 10)).toBe(true);
    const metrics = (await gateway.get("/metrics")).text;
    expect(metricValue(metrics, 'edgefleet_gateway_enrollments_total{outcome="throttled"}')).toBe(
      throttled.length,
    );
    // The budget refills (5 a second here): a real node gets in shortly after.
    const { token: secret } = await token();
    const key = createUser();
    const reply = await waitFor("enrolled after the flood", async () => {
      const answer = await enroll(secret, key, "after-flood");
      return answer.st === "approved" ? answer : undefined;
    });
    expect(reply.nid).toBeDefined();
  });
});
