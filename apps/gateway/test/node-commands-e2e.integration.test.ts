import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatWireId } from "@edgefleet/agent-sdk/protocol";
import { createEnrollmentToken, type Db, setDesiredApps } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import {
  freePort,
  type RunningNats,
  startNats,
  startOperatorModeHub,
  waitFor,
} from "@edgefleet/nats-tenancy/testing";
import { encode } from "@msgpack/msgpack";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess } from "./support/gateway-process.js";
import { organizationLeafLinks } from "./support/leaf-links.js";
import { requireTestEnv } from "./support/required-env.js";
import { testAgent } from "./support/test-agent.js";

// Node commands end to end (issue 13): the gateway's internal API → NATS through a site leaf →
// the agent under test (reference or native: the vitest project picks) → its reply → the API.
// Also what never reaches an agent: an offline node, another organization's node, a node that
// does not answer, one that answers garbage or too much.

const gatewayDir = join(import.meta.dirname, "..");
const agentUnderTest = testAgent();
const workDir = mkdtempSync(join(tmpdir(), "ef-commands-e2e-"));
const marker = `edgefleet-cmd-e2e-${randomBytes(4).toString("hex")}`;
const internalToken = randomBytes(16).toString("hex");

let secrets: TenancySecrets;
let hub: RunningNats & { leafUrl: string };
let leaf: RunningNats;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let agent: ChildProcess;
let agentLog = "";
let organizationId: string;
let nodeId: string;
let platform: NatsConnection;

const file = (name: string, content: string) => {
  writeFileSync(join(workDir, name), content);
  return join(workDir, name);
};

interface Outcome {
  nodeId: string;
  ok: boolean;
  ms: number;
  code?: string;
  error?: string;
  result?: Record<string, unknown> & {
    inst?: { app: string; st: string; rs: number; why?: string };
    hl?: { ok: boolean; why?: string };
    diag?: { av: string; cfg: Record<string, string>; log: string[]; inst: unknown[]; dt: number };
    rep?: { st: number; mx: number };
  };
}

async function command(
  body: Record<string, unknown>,
  org = organizationId,
): Promise<{ status: number; results: Outcome[]; error?: string }> {
  const response = await fetch(`${gateway.baseUrl}/internal/orgs/${org}/node-commands`, {
    method: "POST",
    headers: { authorization: `Bearer ${internalToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as { results: Outcome[]; error?: string };
  return { status: response.status, ...json };
}

async function internal<T>(path: string, body: unknown): Promise<{ status: number; json: T }> {
  const response = await fetch(`${gateway.baseUrl}/internal/orgs/${organizationId}/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${internalToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as T };
}

interface Poll {
  sessionId: string;
  lines: string[];
  lost: number;
  bytes: number;
  ended: boolean;
  endReason: string | null;
}

async function one(body: Record<string, unknown>): Promise<Outcome> {
  const answer = await command(body);
  expect(answer.status, answer.error).toBe(200);
  expect(answer.results).toHaveLength(1);
  return answer.results[0] as Outcome;
}

beforeAll(async () => {
  secrets = await createTenancySecrets("cmd");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  organizationId = (await db.organization.create({ data: { slug: "cmd", name: "Commands" } })).id;
  // The node is enrolled at the site whose leaf it reaches the hub through (its subjects name it).
  const siteId = (await db.site.create({ data: { organizationId, name: "plant-9" } })).id;
  const env = {
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
  };
  gateway = await GatewayProcess.start({
    ...env,
    GATEWAY_INTERNAL_TOKEN: internalToken,
    GATEWAY_HEALTH_INTERVAL_MS: "500",
    GATEWAY_HEARTBEAT_INTERVAL_S: "1",
    GATEWAY_METRICS_INTERVAL_S: "60",
    GATEWAY_LIVENESS_FLUSH_MS: "200",
    GATEWAY_DESIRED_RESCAN_MS: "1000",
    GATEWAY_LOG_VIEWER_LEASE_MS: "2000",
  });
  await gateway.waitForReadyz(200);
  platform = await connect({
    servers: hub.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(secrets.platform.userCreds)),
  });

  // The site's leaf node, as an operator generates it.
  const agentPort = await freePort();
  const bundleDir = join(workDir, "leaf");
  const generated = spawnSync(
    process.execPath,
    [
      join(gatewayDir, "node_modules/tsx/dist/cli.mjs"),
      "src/cli/site-leaf.ts",
      ...["--org", "cmd", "--site", "plant-9", "--hub", hub.leafUrl],
      ...["--listen", `127.0.0.1:${agentPort}`, "--out", bundleDir],
    ],
    { cwd: gatewayDir, env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8" },
  );
  expect(generated.status, generated.stderr).toBe(0);
  leaf = await startNats(
    ({ monitorPort }) =>
      `${readFileSync(join(bundleDir, "leaf.conf"), "utf8")}\nhttp: 127.0.0.1:${monitorPort}\n`,
  );
  await waitFor("leaf link up", async () => {
    return (await organizationLeafLinks(hub.monitorUrl, secrets)) > 0 ? true : undefined;
  });

  const { token } = await createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(Date.now() + 600_000),
    maxUses: 1,
    siteId,
  });
  const config = file(
    "agent.yaml",
    [
      `stateDir: ${join(workDir, "agent-state")}`,
      `servers: ["nats://127.0.0.1:${agentPort}"]`,
      "enroll:",
      `  servers: ["${hub.url}"]`,
      `  credsFile: ${file("enroll.creds", secrets.enroll.userCreds)}`,
      `  token: ${token}`,
      "  name: cmd-node",
      "reconnect: { baseMs: 100, maxMs: 1000 }",
    ].join("\n"),
  );
  agent = spawn(agentUnderTest.command, [...agentUnderTest.args, "run", "--config", config], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  agent.stdout?.on("data", (chunk) => (agentLog += chunk));
  agent.stderr?.on("data", (chunk) => (agentLog += chunk));
  nodeId = await waitFor(
    `node online (agent log: ${agentLog.slice(-1500)})`,
    async () =>
      (await db.node.findFirst({ where: { organizationId, name: "cmd-node", status: "online" } }))?.id,
    30_000,
  );
  // One app with a health check, running.
  const app = await db.app.create({ data: { organizationId, name: "vision" } });
  const version = await db.appVersion.create({
    data: {
      organizationId,
      appId: app.id,
      version: "1.0.0",
      artifactUrl: "builtin:vision",
      runSpec: {
        // Writes a line every 100 ms (live logs read it), a binary burst and an enormous line once.
        command: [
          process.execPath,
          "-e",
          [
            "let i = 0;",
            "process.stdout.write(Buffer.from([0, 1, 2, 3, 255, 254, 0, 7, 8, 10]));",
            "console.log('huge ' + 'x'.repeat(100000));",
            "setInterval(() => console.log('tick ' + i++), 100);",
          ].join(" "),
          marker,
        ],
        health: { exec: ["true"], intervalSeconds: 1 },
        stopGraceSeconds: 2,
      },
    },
  });
  await setDesiredApps(db, organizationId, nodeId, { put: [version.id] });
  await waitFor("vision running", async () => {
    const row = await db.appInstance.findFirst({ where: { nodeId, appId: app.id } });
    return row?.state === "running" ? row : undefined;
  });
}, 120_000);

afterAll(async () => {
  if (agent && agent.exitCode === null) {
    const exited = new Promise((resolve) => agent.once("exit", resolve));
    agent.kill("SIGTERM");
    await exited;
  }
  await platform?.close();
  await gateway?.kill();
  await leaf?.stop();
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

describe(`node commands (${agentUnderTest.kind} agent)`, () => {
  it("restarts an app: the restart counter moves, in the reply and in the inventory", async () => {
    const before = await db.appInstance.findFirstOrThrow({ where: { nodeId } });
    const outcome = await one({ nodeIds: [nodeId], cmd: "restart", app: "vision" });
    expect(outcome, agentLog.slice(-2000)).toMatchObject({ ok: true, result: { inst: { app: "vision" } } });
    expect(outcome.result?.inst?.rs).toBe(before.restarts + 1);
    await waitFor("restart counted in the inventory", async () => {
      const row = await db.appInstance.findFirstOrThrow({ where: { nodeId } });
      return row.restarts === before.restarts + 1 && row.state === "running" ? row : undefined;
    });
  });

  it("stops an app until it is started again", async () => {
    const stopped = await one({ nodeIds: [nodeId], cmd: "stop", app: "vision" });
    expect(stopped).toMatchObject({
      ok: true,
      result: { inst: { st: "stopped", why: "stopped by an operator" } },
    });
    await waitFor("stopped in the inventory", async () =>
      (await db.appInstance.findFirstOrThrow({ where: { nodeId } })).state === "stopped" ? true : undefined,
    );
    const started = await one({ nodeIds: [nodeId], cmd: "start", app: "vision" });
    expect(started.ok).toBe(true);
    await waitFor("running again", async () =>
      (await db.appInstance.findFirstOrThrow({ where: { nodeId } })).state === "running" ? true : undefined,
    );
  });

  it("re-runs a health check, and refuses an unknown app", async () => {
    const health = await one({ nodeIds: [nodeId], cmd: "health", app: "vision" });
    expect(health).toMatchObject({ ok: true, result: { hl: { ok: true } } });
    const unknown = await one({ nodeIds: [nodeId], cmd: "restart", app: "no-such-app" });
    expect(unknown).toMatchObject({ ok: false, code: "unknown_app" });
    expect(unknown.error).toContain("no-such-app");
  });

  it("collects a diagnostics bundle: version, settings without secrets, disk, log, apps", async () => {
    const outcome = await one({ nodeIds: [nodeId], cmd: "diag" });
    expect(outcome.ok, outcome.error).toBe(true);
    const diag = outcome.result?.diag;
    expect(diag?.av).toMatch(/\d/);
    expect(diag?.dt).toBeGreaterThan(0);
    expect(diag?.cfg.servers).toContain("nats://127.0.0.1:");
    expect(diag?.inst).toEqual([expect.objectContaining({ app: "vision" })]);
    expect(diag?.log.length).toBeGreaterThan(0);
    expect(diag?.log.join("\n")).toContain("connected");
    // The enrollment token and the node's credentials never leave the node.
    const text = JSON.stringify(diag);
    expect(text).not.toMatch(/SUAC|-----BEGIN|eyJ0eXAi/);
    expect(text).not.toContain(readFileSync(join(workDir, "agent.yaml"), "utf8").match(/token: (\S+)/)?.[1]);
  });

  it("forces a status and a metrics report", async () => {
    const node = await db.node.findUniqueOrThrow({ where: { id: nodeId } });
    const outcome = await one({ nodeIds: [nodeId], cmd: "report" });
    expect(outcome.ok, outcome.error).toBe(true);
    expect(outcome.result?.rep?.mx).toBeGreaterThan(Number(node.metricsSeq));
    await waitFor("forced metrics report stored", async () => {
      const after = await db.node.findUniqueOrThrow({ where: { id: nodeId } });
      return Number(after.metricsSeq) >= (outcome.result?.rep?.mx ?? Number.POSITIVE_INFINITY)
        ? true
        : undefined;
    });
  });

  it("answers an offline node at once, without waiting for a timeout", async () => {
    const offline = await db.node.create({ data: { organizationId, name: "off-1", status: "offline" } });
    const started = Date.now();
    const outcome = await one({ nodeIds: [offline.id], cmd: "report", timeoutMs: 10_000 });
    expect(outcome).toMatchObject({ ok: false, code: "offline" });
    expect(outcome.error).toContain("off-1");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("refuses another organization's node like a missing one, and bad input with 400", async () => {
    const other = await db.organization.create({ data: { slug: "other", name: "Other" } });
    const foreign = await db.node.create({
      data: { organizationId: other.id, name: "theirs", status: "online" },
    });
    const outcome = await one({ nodeIds: [foreign.id], cmd: "report" });
    expect(outcome).toMatchObject({ ok: false, code: "not_found" });
    const noApp = await command({ nodeIds: [nodeId], cmd: "restart" });
    expect(noApp.status).toBe(400);
    expect(noApp.error).toContain("app");
    const bulkDiag = await command({ nodeIds: [nodeId, foreign.id], cmd: "diag" });
    expect(bulkDiag.status).toBe(400);
    expect(bulkDiag.error).toContain("nodeIds");
  });

  it("bulk: one outcome per node, each with its own reason", async () => {
    const offline = await db.node.create({ data: { organizationId, name: "off-2", status: "offline" } });
    const answer = await command({ nodeIds: [nodeId, offline.id], cmd: "health", app: "vision" });
    expect(answer.status).toBe(200);
    const byNode = new Map(answer.results.map((result) => [result.nodeId, result]));
    expect(byNode.get(nodeId)).toMatchObject({ ok: true });
    expect(byNode.get(offline.id)).toMatchObject({ ok: false, code: "offline" });
  });

  it("a node that does not answer times out; one answering garbage or too much is a clear error", async () => {
    // A node the inventory has online but whose replies we write ourselves, on the platform
    // subject its own uplink maps to (what the hub delivers when that node publishes).
    const fake = await db.node.create({
      data: { organizationId, name: "fake", status: "online", lastSeenAt: new Date() },
    });
    const org = formatWireId(
      (await db.organization.findUniqueOrThrow({ where: { id: organizationId } })).wireId,
    );
    const wid = formatWireId(fake.wireId);
    const silent = await one({ nodeIds: [fake.id], cmd: "report", timeoutMs: 800 });
    expect(silent).toMatchObject({ ok: false, code: "timeout" });

    const answerWith = async (payload: Uint8Array) => {
      const requests = platform.subscribe(`ef.t.${org}.down.${wid}`, { max: 1 });
      await platform.flush();
      const pending = one({ nodeIds: [fake.id], cmd: "report", timeoutMs: 5_000 });
      for await (const _request of requests) platform.publish(`ef.t.${org}.up.${wid}.cmd`, payload);
      return pending;
    };
    await db.node.update({ where: { id: fake.id }, data: { status: "online", lastSeenAt: new Date() } });
    const garbage = await answerWith(new Uint8Array([0xc1, 0x00, 0xff]));
    expect(garbage).toMatchObject({ ok: false, code: "bad_reply" });
    expect(garbage.error).toContain("invalid reply");
    expect(garbage.ms).toBeLessThan(4_000);

    await db.node.update({ where: { id: fake.id }, data: { status: "online", lastSeenAt: new Date() } });
    const huge = await answerWith(encode({ v: 1, id: "x", ok: true, pad: "y".repeat(300 * 1024) }));
    expect(huge).toMatchObject({ ok: false, code: "bad_reply" });
    expect(huge.error).toContain("limit");
    // The gateway lives on.
    expect((await fetch(`${gateway.baseUrl}/healthz`)).status).toBe(200);
  });

  it("tails an app's logs: history, then new lines as the viewer polls; binary and enormous lines sanitized", async () => {
    const opened = await internal<{ ok: boolean; poll: Poll; code?: string; error?: string }>(
      "log-sessions",
      {
        nodeId,
        app: "vision",
        tail: 0,
      },
    );
    expect(opened.status).toBe(200);
    expect(opened.json.ok, `${opened.json.error} ${agentLog.slice(-1500)}`).toBe(true);
    const session = opened.json.poll.sessionId;
    const seen = [...opened.json.poll.lines];
    const ticks = () => seen.filter((line) => /^tick \d+$/.test(line)).map((line) => Number(line.slice(5)));
    await waitFor(
      "new lines stream in",
      async () => {
        const poll = await internal<{ poll: Poll }>(`log-sessions/${session}/poll`, {});
        expect(poll.status).toBe(200);
        seen.push(...poll.json.poll.lines);
        return ticks().length >= 60 ? true : undefined;
      },
      20_000,
    );
    // In order, none lost, no line over the limit.
    const numbers = ticks();
    for (let index = 1; index < numbers.length; index++)
      expect(numbers[index]).toBeGreaterThan(numbers[index - 1] as number);
    for (const line of seen) expect(Buffer.byteLength(line)).toBeLessThan(2200);
    const close = await internal<{ closed: boolean }>(`log-sessions/${session}/close`, {});
    expect(close.json.closed).toBe(true);
    const after = await internal<{ error: string }>(`log-sessions/${session}/poll`, {});
    expect(after.status).toBe(404);
  });

  it("logs from the start of the app's output: the binary burst and the enormous line come sanitized", async () => {
    const restarted = await one({ nodeIds: [nodeId], cmd: "restart", app: "vision" });
    expect(restarted.ok, restarted.error).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const opened = await internal<{ ok: boolean; poll: Poll }>("log-sessions", {
      nodeId,
      app: "vision",
      tail: 1000,
      follow: false,
    });
    expect(opened.json.ok).toBe(true);
    const lines = [...opened.json.poll.lines];
    let poll = opened.json.poll;
    while (!poll.ended) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      poll = (await internal<{ poll: Poll }>(`log-sessions/${opened.json.poll.sessionId}/poll`, {})).json
        .poll;
      lines.push(...poll.lines);
    }
    expect(poll.endReason).toBe("done");
    expect(lines.some((line) => line.startsWith("[binary output:"))).toBe(true);
    const huge = lines.find((line) => line.startsWith("huge xxx"));
    expect(huge).toMatch(/bytes cut\]$/);
    expect(Buffer.byteLength(huge ?? "")).toBeLessThan(2200);
  });

  it("a session stops on the node when the viewer leaves; a session ends at its byte budget", async () => {
    // The history (the enormous line, cut to 2 KiB, and the ticks) is more than the budget.
    const budgeted = await internal<{ ok: boolean; poll: Poll }>("log-sessions", {
      nodeId,
      app: "vision",
      tail: 1000,
      budgetBytes: 4096,
    });
    expect(budgeted.json.ok).toBe(true);
    const id = budgeted.json.poll.sessionId;
    const ended = await waitFor(
      "budget reached",
      async () => {
        const poll = (await internal<{ poll: Poll }>(`log-sessions/${id}/poll`, {})).json.poll;
        return poll.ended ? poll : undefined;
      },
      20_000,
    );
    expect(ended.endReason).toBe("budget");
    expect(ended.bytes).toBeLessThanOrEqual(4096);
    // A viewer that stops polling: the gateway cancels the session on the node.
    const left = await internal<{ ok: boolean; poll: Poll }>("log-sessions", {
      nodeId,
      app: "vision",
      tail: 0,
    });
    expect(left.json.ok).toBe(true);
    const leftId = left.json.poll.sessionId;
    await waitFor(
      "the node ended the session",
      async () =>
        new RegExp(
          `log session ended.*${leftId}.*cancelled|${leftId}.*log session ended.*cancelled|log session ended.*cancelled.*${leftId}`,
        ).test(agentLog)
          ? true
          : undefined,
      10_000,
    );
    expect((await internal(`log-sessions/${leftId}/poll`, {})).status).toBe(404);
    // Refusals: an unknown app, another organization's node; a bad field is a 400 naming it.
    const unknown = await internal<{ ok: boolean; code: string }>("log-sessions", { nodeId, app: "nope" });
    expect(unknown.json).toMatchObject({ ok: false, code: "unknown_app" });
    const bad = await internal<{ error: string }>("log-sessions", { nodeId, app: "vision", tail: -1 });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("tail");
  });

  it("per node limits on log sessions say why", async () => {
    const a = await internal<{ ok: boolean; poll: Poll }>("log-sessions", { nodeId, app: "vision", tail: 0 });
    const b = await internal<{ ok: boolean; poll: Poll }>("log-sessions", { nodeId, app: "vision", tail: 0 });
    const c = await internal<{ ok: boolean; code: string; error: string }>("log-sessions", {
      nodeId,
      app: "vision",
      tail: 0,
    });
    expect(a.json.ok && b.json.ok).toBe(true);
    expect(c.json).toMatchObject({ ok: false, code: "busy" });
    expect(c.json.error).toMatch(/node already has 2 log sessions in flight/);
    for (const session of [a, b]) await internal(`log-sessions/${session.json.poll.sessionId}/close`, {});
  });

  it("runs a throughput probe to the leaf and to the hub, within its bounds", async () => {
    for (const to of ["leaf", "hub"]) {
      const { json } = await internal<{
        result: Outcome & { result?: { prb?: { to: string; by: number; ms: number } } };
      }>("node-probes", { nodeId, to, bytes: 512 * 1024, ms: 5_000 });
      expect(json.result.ok, `${to}: ${json.result.error} ${agentLog.slice(-1500)}`).toBe(true);
      const prb = json.result.result?.prb;
      expect(prb?.to).toBe(to);
      expect(prb?.by).toBeGreaterThan(0);
      expect(prb?.by).toBeLessThanOrEqual(512 * 1024 + 16 * 1024);
      expect(prb?.ms).toBeGreaterThan(0);
      expect(prb?.ms).toBeLessThan(8_000);
    }
    const bad = await internal<{ error: string }>("node-probes", { nodeId, to: "moon", bytes: 1, ms: 100 });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("to");
  });
});
