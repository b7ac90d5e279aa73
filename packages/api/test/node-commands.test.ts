/**
 * Node commands below the browser (issue 13): tRPC and REST → the REAL gateway (child process) →
 * a real nats-server → a scripted node on the node's platform subjects (what the hub delivers to
 * and from an agent; the real agents are tested through a site leaf in apps/gateway's
 * node-commands e2e). Here: roles per command, tenancy, per-node results, limits, audit.
 */
import { randomBytes } from "node:crypto";
import { decodeMessage, encodeMessage, formatWireId } from "@edgefleet/agent-sdk/protocol";
import type { Db, Role } from "@edgefleet/db";
import { type RunningNats, startPlainHub } from "@edgefleet/nats-tenancy/testing";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { TRPCError } from "@trpc/server";
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
const nodes: Record<string, { id: string; wid: string }> = {};
/** Per node wire id: how the scripted node answers (delay, then a payload or nothing). */
const behaviour = new Map<string, { delayMs: number; answer: "ok" | "silent" | "garbage" }>();
const restarts = new Map<string, number>();

function caller(session: ApiSession | null, slug = ORG) {
  return createCaller(createTRPCContext({ db, session, activeOrganizationSlug: slug, gateway }));
}

async function createNode(organizationId: string, name: string, status: "online" | "offline" = "online") {
  // Seen just now: the gateway's offline sweeper takes a node never seen for offline.
  const node = await db.node.create({ data: { organizationId, name, status, lastSeenAt: new Date() } });
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
    // Long enough that the sweeper leaves our scripted nodes online during the test.
    GATEWAY_HEARTBEAT_INTERVAL_S: "600",
    GATEWAY_COMMANDS_PER_ORG: "3",
  });
  gateway = { url: gatewayProcess.baseUrl, internalToken: TOKEN };
  members = await membersByRole(db);
  keys = await apiKeysByRole(db, await sessionOf(db, "alice@acme.example"), ORG);
  acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: ORG } })).id;
  const globexId = (await db.organization.findUniqueOrThrow({ where: { slug: OTHER_ORG } })).id;
  for (const name of ["cmd-a", "cmd-b", "cmd-c", "cmd-d", "cmd-slow"]) await createNode(acmeId, name);
  await createNode(acmeId, "cmd-off", "offline");
  await createNode(acmeId, "cmd-garbage");
  await createNode(globexId, "globex-node");
  behaviour.set(nodes["cmd-slow"]?.wid ?? "", { delayMs: 1_500, answer: "ok" });
  behaviour.set(nodes["cmd-garbage"]?.wid ?? "", { delayMs: 0, answer: "garbage" });

  // The scripted nodes: every request on a node's downlink is answered on its uplink.
  nc = await connect({ servers: hub.url });
  nc.subscribe("ef.t.*.down.*", {
    callback: (_error, msg) => {
      const [, , org, , wid] = msg.subject.split(".") as [string, string, string, string, string];
      const decoded = decodeMessage("commandRequest", msg.data);
      if (!decoded.ok) return;
      const request = decoded.msg;
      const how = behaviour.get(wid) ?? { delayMs: 0, answer: "ok" };
      if (how.answer === "silent") return;
      setTimeout(() => {
        const count = (restarts.get(wid) ?? 0) + (request.cmd === "restart" ? 1 : 0);
        restarts.set(wid, count);
        const payload =
          how.answer === "garbage"
            ? new Uint8Array([0xde, 0xad])
            : encodeMessage("commandReply", {
                v: 1,
                id: request.id,
                ok: true,
                ...(request.app ? { inst: { app: request.app, ver: "1.0", st: "running", rs: count } } : {}),
                ...(request.cmd === "report" ? { rep: { st: 3, mx: 9 } } : {}),
                ...(request.cmd === "diag"
                  ? {
                      diag: {
                        av: "0.4.0",
                        os: "linux",
                        arch: "x64",
                        up: 5,
                        cfg: { servers: "nats://leaf:4222" },
                        du: 1,
                        dt: 2,
                        log: ["connected"],
                        inst: [],
                      },
                    }
                  : {}),
              });
        nc.publish(`ef.t.${org}.up.${wid}.cmd`, payload);
      }, how.delayMs);
    },
  });
  await nc.flush();
  // startRealGateway waited for the edge services: the command service (started before the
  // artifact importer it waits for) listens.
}, 90_000);

afterAll(async () => {
  await nc?.close();
  await gatewayProcess?.kill();
  await hub?.stop();
  await testDb?.drop();
});

const id = (name: string) => nodes[name]?.id ?? "";

describe("node commands", () => {
  it("restarts an app on one node and audits it", async () => {
    const run = await caller(members.operator).node.command({
      id: id("cmd-b"),
      command: "restart",
      app: "vision",
    });
    expect(run).toMatchObject({ command: "restart", app: "vision", succeeded: 1, failed: 0 });
    expect(run.results[0]).toMatchObject({
      nodeId: id("cmd-b"),
      nodeName: "cmd-b",
      ok: true,
      instance: { app: "vision", state: "running", restarts: 1 },
    });
    const audit = await db.auditLog.findFirstOrThrow({
      where: { organizationId: acmeId, action: "node.command", targetId: id("cmd-b") },
    });
    expect(audit.after).toMatchObject({ command: "restart", app: "vision", succeeded: 1 });
  });

  it("roles per command: viewers run nothing, stop needs an admin", async () => {
    for (const command of ["restart", "health", "report"] as const) {
      await expect(
        caller(members.viewer).node.command({ id: id("cmd-a"), command, app: "vision" }),
      ).rejects.toMatchObject({ code: "FORBIDDEN" });
    }
    await expect(
      caller(members.operator).node.command({ id: id("cmd-a"), command: "stop", app: "vision" }),
    ).rejects.toThrow(/stop needs the admin role; you are operator/);
    const stopped = await caller(members.admin).node.command({
      id: id("cmd-a"),
      command: "stop",
      app: "vision",
    });
    expect(stopped.succeeded).toBe(1);
    // A refused call writes no audit row.
    const viewerRows = await db.auditLog.count({ where: { actorId: members.viewer.userId } });
    expect(viewerRows).toBe(0);
  });

  it("bulk: one result per node — another organization's node is not found, an offline one says so", async () => {
    const run = await caller(members.operator).node.bulkCommand({
      nodeIds: [id("cmd-a"), id("cmd-off"), id("globex-node"), id("cmd-garbage")],
      command: "health",
      app: "vision",
    });
    expect(run.succeeded).toBe(1);
    const byNode = new Map(run.results.map((result) => [result.nodeId, result]));
    expect(byNode.get(id("cmd-a"))).toMatchObject({ ok: true, nodeName: "cmd-a" });
    expect(byNode.get(id("cmd-off"))).toMatchObject({ ok: false, code: "offline", nodeName: "cmd-off" });
    expect(byNode.get(id("cmd-off"))?.error).toContain("offline");
    // Nothing about the other organization's node leaks: not its name, not its state.
    expect(byNode.get(id("globex-node"))).toMatchObject({ ok: false, code: "not_found", nodeName: null });
    expect(byNode.get(id("cmd-garbage"))).toMatchObject({ ok: false, code: "bad_reply" });
  });

  it("limits: a second command to a busy node and one past the organization's limit are refused, saying why", async () => {
    const slow = caller(members.operator).node.command({ id: id("cmd-slow"), command: "report" });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await caller(members.operator).node.command({ id: id("cmd-slow"), command: "report" });
    expect(again.results[0]).toMatchObject({ ok: false, code: "busy" });
    expect(again.results[0]?.error).toMatch(/node already has 1 command in flight/);
    // Organization limit 3 (GATEWAY_COMMANDS_PER_ORG): the slow one holds one slot.
    behaviour.set(nodes["cmd-c"]?.wid ?? "", { delayMs: 1_000, answer: "ok" });
    behaviour.set(nodes["cmd-d"]?.wid ?? "", { delayMs: 1_000, answer: "ok" });
    const crowd = await caller(members.operator).node.bulkCommand({
      nodeIds: [id("cmd-c"), id("cmd-d"), id("cmd-b")],
      command: "report",
    });
    const refused = crowd.results.filter((result) => result.code === "busy");
    expect(refused).toHaveLength(1);
    expect(refused[0]?.error).toMatch(/organization already has 3 commands in flight/);
    expect((await slow).succeeded).toBe(1);
  });

  it("bad input is a 400 naming the field, and changes nothing", async () => {
    const before = await db.auditLog.count();
    await expect(
      caller(members.operator).node.command({ id: id("cmd-a"), command: "restart" }),
    ).rejects.toThrow(/app/);
    await expect(
      caller(members.operator).node.bulkCommand({ nodeIds: [id("cmd-a")], command: "diag" }),
    ).rejects.toThrow(/one node at a time/);
    await expect(
      caller(members.operator).node.bulkCommand({ nodeIds: [], command: "report" }),
    ).rejects.toBeInstanceOf(TRPCError);
    expect(await db.auditLog.count()).toBe(before);
  });

  it("REST: a diagnostics bundle with an operator key; a viewer key is refused", async () => {
    const rest = (key: string, path: string, body: unknown) =>
      handleRestRequest(
        new Request(`http://edgefleet.test${REST_BASE_PATH}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
        { db, gateway },
      );
    const response = await rest(keys.operator, `/nodes/${id("cmd-a")}/commands`, { command: "diag" });
    expect(response.status).toBe(200);
    const run = (await response.json()) as {
      results: Array<{ diagnostics: { agentVersion: string; log: string[] } }>;
    };
    expect(run.results[0]?.diagnostics, JSON.stringify(run)).toMatchObject({
      agentVersion: "0.4.0",
      log: ["connected"],
    });
    const refused = await rest(keys.viewer, "/nodes/commands", { nodeIds: [id("cmd-a")], command: "report" });
    expect(refused.status).toBe(403);
    const bad = await rest(keys.operator, "/nodes/commands", { nodeIds: ["not-a-uuid"], command: "report" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("nodeIds");
  });
});
