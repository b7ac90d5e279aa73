/**
 * Live logs and network probes below the browser (issue 13): tRPC and REST → the REAL gateway
 * (child process) → a real nats-server → a scripted node on the node's platform subjects. The real
 * agents are tested through a site leaf in apps/gateway's node-commands e2e. Here: who may read
 * logs and run probes, tenancy of sessions, limits (429 with the reason), stored probe results.
 */
import { randomBytes } from "node:crypto";
import { decodeMessage, encodeMessage, formatWireId } from "@edgefleet/agent-sdk/protocol";
import type { Db, Role } from "@edgefleet/db";
import { type RunningNats, startPlainHub } from "@edgefleet/nats-tenancy/testing";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiSession, createCaller, createTRPCContext, handleRestRequest, REST_BASE_PATH } from "../src";
import type { GatewayConnection } from "../src/gateway-client";
import { apiKeysByRole, membersByRole, ORG, OTHER_ORG } from "./actors";
import { sessionOf } from "./callers";
import { type RealGateway, startRealGateway } from "./real-gateway";
import { createTestDatabase, type TestDatabase } from "./test-database";

const TOKEN = randomBytes(24).toString("base64url");
let testDb: TestDatabase;
let db: Db;
let hub: RunningNats;
let gatewayProcess: RealGateway;
let gateway: GatewayConnection;
let nc: NatsConnection;
let members: Record<Role, ApiSession>;
let keys: Record<Role, string>;
let acmeId: string;
let siteId: string;
const nodes: Record<string, { id: string; wid: string }> = {};
/** What the scripted nodes were asked, in order: `<wid> <cmd> <id>`. */
const heard: string[] = [];

function caller(session: ApiSession | null, slug = ORG) {
  return createCaller(createTRPCContext({ db, session, activeOrganizationSlug: slug, gateway }));
}

async function createNode(organizationId: string, name: string, status: "online" | "offline" = "online") {
  const node = await db.node.create({
    data: {
      organizationId,
      name,
      status,
      lastSeenAt: new Date(),
      ...(name.startsWith("log-") ? { siteId } : {}),
    },
  });
  nodes[name] = { id: node.id, wid: formatWireId(node.wireId) };
  return nodes[name];
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  hub = await startPlainHub();
  gatewayProcess = await startRealGateway({
    DATABASE_URL: testDb.url,
    NATS_URL: hub.url,
    MIMIR_URL: process.env.MIMIR_URL ?? "http://127.0.0.1:1",
    GATEWAY_INTERNAL_TOKEN: TOKEN,
    GATEWAY_HEALTH_INTERVAL_MS: "500",
    GATEWAY_HEARTBEAT_INTERVAL_S: "600",
    GATEWAY_LOG_SESSIONS_PER_NODE: "2",
  });
  gateway = { url: gatewayProcess.baseUrl, internalToken: TOKEN };
  members = await membersByRole(db);
  keys = await apiKeysByRole(db, await sessionOf(db, "alice@acme.example"), ORG);
  acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: ORG } })).id;
  siteId = (await db.site.create({ data: { organizationId: acmeId, name: "probe-site" } })).id;
  const globexId = (await db.organization.findUniqueOrThrow({ where: { slug: OTHER_ORG } })).id;
  for (const name of ["log-a", "log-b"]) await createNode(acmeId, name);
  await createNode(acmeId, "log-off", "offline");
  await createNode(globexId, "globex-log");

  // The scripted nodes: logs answer with two lines of history, probes with a measurement.
  nc = await connect({ servers: hub.url });
  nc.subscribe("ef.t.*.down.*", {
    callback: (_error, msg) => {
      const [, , org, , wid] = msg.subject.split(".") as [string, string, string, string, string];
      const decoded = decodeMessage("commandRequest", msg.data);
      if (!decoded.ok) return;
      const request = decoded.msg;
      heard.push(`${wid} ${request.cmd} ${request.id}`);
      const reply = (body: Record<string, unknown>) =>
        nc.publish(
          `ef.t.${org}.up.${wid}.cmd`,
          encodeMessage("commandReply", { v: 1, id: request.id, ok: true, ...body }),
        );
      if (request.cmd === "logs") {
        if (request.app !== "vision") {
          nc.publish(
            `ef.t.${org}.up.${wid}.cmd`,
            encodeMessage("commandReply", {
              v: 1,
              id: request.id,
              ok: false,
              err: "unknown_app",
              why: `no app ${request.app} on this node`,
            }),
          );
          return;
        }
        reply({ lg: { p: 0, l: ["booting", "ready"] } });
      }
      if (request.cmd === "probe") {
        reply({
          prb: { to: request.to, by: 1024 * 1024, ms: request.to === "hub" ? 500 : 100, via: "nats://x" },
        });
      }
    },
  });
  await nc.flush();
}, 90_000);

afterAll(async () => {
  await nc?.close();
  await gatewayProcess?.kill();
  await hub?.stop();
  await testDb?.drop();
});

const id = (name: string) => nodes[name]?.id ?? "";

describe("live logs", () => {
  it("an operator tails an app: history at once, polls, closes (the node hears cancel); a viewer may not", async () => {
    await expect(
      caller(members.viewer).node.openLogs({ id: id("log-a"), app: "vision" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    const opened = await caller(members.operator).node.openLogs({ id: id("log-a"), app: "vision" });
    expect(opened.lines).toEqual(["booting", "ready"]);
    expect(opened.ended).toBe(false);
    const poll = await caller(members.operator).node.pollLogs({
      id: id("log-a"),
      sessionId: opened.sessionId,
    });
    expect(poll.lines).toEqual([]);
    // The session is the node's and the organization's: not another node's, not another tenant's.
    await expect(
      caller(members.operator).node.pollLogs({ id: id("log-b"), sessionId: opened.sessionId }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      caller(members.owner, OTHER_ORG).node.pollLogs({ id: id("log-a"), sessionId: opened.sessionId }),
    ).rejects.toBeTruthy();
    await expect(
      caller(members.viewer).node.pollLogs({ id: id("log-a"), sessionId: opened.sessionId }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(
      await caller(members.operator).node.closeLogs({ id: id("log-a"), sessionId: opened.sessionId }),
    ).toEqual({
      closed: true,
    });
    await expect.poll(() => heard.includes(`${nodes["log-a"]?.wid} cancel ${opened.sessionId}`)).toBe(true);
    await expect(
      caller(members.operator).node.pollLogs({ id: id("log-a"), sessionId: opened.sessionId }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    const audit = await db.auditLog.findMany({ where: { action: { startsWith: "node.logs" } } });
    expect(audit.map((row) => row.action).sort()).toEqual(["node.logs.close", "node.logs.open"]);
  });

  it("refuses an unknown app (naming the field), an offline node, another organization's node", async () => {
    await expect(
      caller(members.operator).node.openLogs({ id: id("log-a"), app: "nope" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("app") });
    await expect(
      caller(members.operator).node.openLogs({ id: id("log-off"), app: "vision" }),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringContaining("offline") });
    await expect(
      caller(members.operator).node.openLogs({ id: id("globex-log"), app: "vision" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      caller(members.operator).node.openLogs({ id: id("log-a"), app: "vision", tail: 5000 }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("tail") });
  });

  it("per node limit: a third session is refused with TOO_MANY_REQUESTS saying why", async () => {
    const a = await caller(members.operator).node.openLogs({ id: id("log-b"), app: "vision" });
    const b = await caller(members.operator).node.openLogs({ id: id("log-b"), app: "vision" });
    await expect(
      caller(members.operator).node.openLogs({ id: id("log-b"), app: "vision" }),
    ).rejects.toMatchObject({
      code: "TOO_MANY_REQUESTS",
      message: expect.stringMatching(/node already has 2 log sessions in flight \(at most 2/),
    });
    for (const session of [a, b])
      await caller(members.operator).node.closeLogs({ id: id("log-b"), sessionId: session.sessionId });
    const again = await caller(members.operator).node.openLogs({ id: id("log-b"), app: "vision" });
    await caller(members.operator).node.closeLogs({ id: id("log-b"), sessionId: again.sessionId });
  });
});

describe("network probes", () => {
  it("an operator probes to the leaf and the hub; results are stored, listed, compared per site", async () => {
    await expect(caller(members.viewer).node.probe({ id: id("log-a"), target: "hub" })).rejects.toMatchObject(
      { code: "FORBIDDEN" },
    );
    const hubProbe = await caller(members.operator).node.probe({ id: id("log-a"), target: "hub" });
    expect(hubProbe).toMatchObject({ ok: true, target: "hub", bytes: 1024 * 1024, durationMs: 500 });
    expect(hubProbe.bytesPerSecond).toBe(2 * 1024 * 1024);
    await caller(members.operator).node.probe({ id: id("log-b"), target: "leaf", bytes: 65536, seconds: 2 });
    expect(heard.some((line) => line.startsWith(`${nodes["log-b"]?.wid} probe`))).toBe(true);
    const listed = await caller(members.viewer).node.probes({ id: id("log-a") });
    expect(listed.map((probe) => probe.id)).toEqual([hubProbe.id]);
    const site = await caller(members.viewer).site.probes({ id: siteId });
    const byName = new Map(site.nodes.map((node) => [node.nodeName, node]));
    expect(byName.get("log-a")).toMatchObject({
      hubBytesPerSecond: 2 * 1024 * 1024,
      leafBytesPerSecond: null,
    });
    expect(byName.get("log-b")?.leafBytesPerSecond).toBe(1024 * 1024 * 10);
    // Another organization sees none of it.
    await expect(caller(members.owner, OTHER_ORG).site.probes({ id: siteId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("REST: bad input is a 400 naming the field and stores nothing; an offline node is refused", async () => {
    const rest = (key: string, method: string, path: string, body?: unknown) =>
      handleRestRequest(
        new Request(`http://edgefleet.test${REST_BASE_PATH}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
        { db, gateway },
      );
    const before = await db.networkProbe.count();
    const bad = await rest(keys.operator, "POST", `/nodes/${id("log-a")}/probes`, { target: "moon" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("target");
    const huge = await rest(keys.operator, "POST", `/nodes/${id("log-a")}/probes`, {
      target: "hub",
      bytes: 1024 * 1024 * 1024,
    });
    expect(huge.status).toBe(400);
    expect(await huge.text()).toContain("bytes");
    const offline = await rest(keys.operator, "POST", `/nodes/${id("log-off")}/probes`, { target: "leaf" });
    expect(offline.status).toBe(412);
    expect(await db.networkProbe.count()).toBe(before);
    const listed = await rest(keys.viewer, "GET", `/nodes/${id("log-a")}/probes`);
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as unknown[]).length).toBeGreaterThan(0);
  });
});
