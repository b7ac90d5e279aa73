import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { artifactBucket, efArtifactUrl, formatWireId, type RunSpec } from "@edgefleet/agent-sdk/protocol";
import { createEnrollmentToken, type Db } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import { type RunningNats, startOperatorModeHub, waitFor } from "@edgefleet/nats-tenancy/testing";
import { type RolloutStrategyInput, rolloutStrategySchema } from "@edgefleet/rollout";
import { actOnRollout, insertRollout, type PersonAction } from "@edgefleet/rollout-store";
import { jetstream } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { create as createTar } from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";

// Rollouts end to end, every part real: uploaded artifacts in the organization's object store,
// the gateway's controller committing batches, reference-CLI agents fetching, verifying and
// running them. A rollout with an approval pause; a rollout with a node offline (skipped, caught
// up when it returns) and a late joiner; a bad-hash version whose batch fails and rolls back by
// itself; and a person's rollback. Every node ends on a known version.

const gatewayDir = join(import.meta.dirname, "..");
const agentBin = join(gatewayDir, "../../packages/agent-sdk/bin/edgefleet-agent.mjs");
const workDir = mkdtempSync(join(tmpdir(), "ef-rollout-e2e-"));

let secrets: TenancySecrets;
let hub: RunningNats;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let platform: NatsConnection;
let organizationId: string;
let orgWireId: string;
let appId: string;
const agents = new Map<string, { child: ChildProcess; log: string; config: string }>();
const nodeIds = new Map<string, string>();
const system = { type: "system" as const, id: "rollout-e2e" };

const file = (name: string, content: string) => {
  writeFileSync(join(workDir, name), content);
  return join(workDir, name);
};

async function enrollAgent(name: string): Promise<string> {
  const { token } = await createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(Date.now() + 600_000),
    maxUses: 1,
    labels: { fleet: "e2e" },
  });
  const config = file(
    `${name}.yaml`,
    [
      `stateDir: ${join(workDir, `state-${name}`)}`,
      `servers: ["${hub.url}"]`,
      "enroll:",
      `  credsFile: ${join(workDir, "enroll.creds")}`,
      `  token: ${token}`,
      `  name: ${name}`,
      "reconnect: { baseMs: 100, maxMs: 1000 }",
    ].join("\n"),
  );
  startAgent(name, config);
  const id = await waitFor(
    `${name} online`,
    async () => (await db.node.findFirst({ where: { organizationId, name, status: "online" } }))?.id,
    30_000,
  );
  nodeIds.set(name, id);
  return id;
}

function startAgent(name: string, config: string): void {
  const child = spawn(process.execPath, [agentBin, "run", "--config", config], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const entry = { child, log: "", config };
  child.stdout?.on("data", (chunk) => (entry.log += chunk));
  child.stderr?.on("data", (chunk) => (entry.log += chunk));
  agents.set(name, entry);
}

async function stopAgent(name: string): Promise<void> {
  const agent = agents.get(name);
  if (!agent || agent.child.exitCode !== null) return;
  const exited = new Promise((resolve) => agent.child.once("exit", resolve));
  agent.child.kill("SIGTERM");
  await exited;
}

beforeAll(async () => {
  secrets = await createTenancySecrets("rollout-e2e");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  const organization = await db.organization.create({ data: { slug: "ro-e2e", name: "Rollouts E2E" } });
  organizationId = organization.id;
  orgWireId = formatWireId(organization.wireId);
  appId = (await db.app.create({ data: { organizationId, name: "greeter" } })).id;
  file("enroll.creds", secrets.enroll.userCreds);
  gateway = await GatewayProcess.start({
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
    GATEWAY_ARTIFACT_CACHE_DIR: join(workDir, "gateway-cache"),
    GATEWAY_HEALTH_INTERVAL_MS: "500",
    GATEWAY_HEARTBEAT_INTERVAL_S: "1",
    GATEWAY_LIVENESS_FLUSH_MS: "200",
    GATEWAY_DESIRED_RESCAN_MS: "1000",
    GATEWAY_ROLLOUT_TICK_MS: "250",
  });
  await gateway.waitForReadyz(200);
  platform = await connect({
    servers: hub.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(secrets.platform.userCreds)),
  });
  await Promise.all(["n1", "n2", "n3"].map((name) => enrollAgent(name)));
}, 120_000);

afterAll(async () => {
  for (const name of agents.keys()) await stopAgent(name);
  await platform?.close();
  await gateway?.kill();
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

/** An uploaded version: a .tar.gz with `run.js` (healthy: it creates `ready`) in the object store. */
async function uploadedVersion(version: string, options: { declaredSha?: string } = {}) {
  const src = join(workDir, `src-${version}`);
  mkdirSync(src, { recursive: true });
  writeFileSync(
    join(src, "run.js"),
    `require("fs").writeFileSync("ready", ""); setInterval(() => {}, 1000);`,
  );
  const archive = join(workDir, `greeter-${version}.tar.gz`);
  await createTar({ gzip: true, file: archive, cwd: src }, ["run.js"]);
  const bytes = readFileSync(archive);
  const sha = createHash("sha256").update(bytes).digest("hex");
  const store = await new Objm(jetstream(platform, { domain: "hub" })).create(artifactBucket(orgWireId));
  await store.putBlob({ name: sha }, bytes);
  const runSpec: RunSpec = {
    command: [process.execPath, "run.js"],
    health: { exec: ["test", "-f", "ready"], intervalSeconds: 1, timeoutSeconds: 1, failureThreshold: 2 },
  };
  return db.appVersion.create({
    data: {
      organizationId,
      appId,
      version,
      artifactSource: "upload",
      artifactState: "ready",
      // A declared hash the content does not have: the node fetches the object by its real name
      // (the URL) and must refuse it on verification.
      artifactUrl: options.declaredSha ? efArtifactUrl(sha) : null,
      artifactSha256: options.declaredSha ?? sha,
      artifactSize: BigInt(bytes.byteLength),
      runSpec,
    },
  });
}

async function createRollout(versionId: string, version: string, strategy: RolloutStrategyInput) {
  return db.$transaction((tx) =>
    insertRollout(tx, {
      organizationId,
      appId,
      appVersionId: versionId,
      selector: "fleet=e2e",
      siteIds: [],
      strategy: rolloutStrategySchema.parse(strategy),
      versionLabel: version,
      actor: system,
    }),
  );
}

async function act(rolloutId: string, action: PersonAction) {
  const outcome = await db.$transaction((tx) => actOnRollout(tx, organizationId, rolloutId, action, system));
  if (!outcome.ok) throw new Error(JSON.stringify(outcome));
}

const statusOf = async (rolloutId: string) =>
  (await db.rollout.findUniqueOrThrow({ where: { id: rolloutId }, select: { status: true } })).status;
const untilStatus = (rolloutId: string, status: string, timeoutMs = 60_000) =>
  waitFor(
    `rollout ${status}`,
    async () => ((await statusOf(rolloutId)) === status ? true : undefined),
    timeoutMs,
    100,
  ).catch(async (error) => {
    const row = await db.rollout.findUniqueOrThrow({ where: { id: rolloutId } });
    throw new Error(
      `${error.message}: ${row.status} ${row.statusReason} ${JSON.stringify(row.waits)}\n${gateway.output
        .join("")
        .split("\n")
        .filter((l) => /"level":"(warn|error)"/.test(l))
        .slice(-10)
        .join(
          "\n",
        )}\n${JSON.stringify(await db.appInstance.findMany({ where: { organizationId } }), (_k, v) => (typeof v === "bigint" ? String(v) : v))}\n${[...agents.values()].map((a) => a.log.slice(-800)).join("\n--\n")}`,
    );
  });

/** What each node runs now, by node name: the version label, or null without the app. */
async function versionsByNode(): Promise<Record<string, string | null>> {
  const nodes = await db.node.findMany({
    where: { organizationId },
    select: {
      name: true,
      appInstances: { select: { state: true, observedVersion: { select: { version: true } } } },
    },
  });
  return Object.fromEntries(
    nodes.map((n) => {
      const instance = n.appInstances[0];
      return [
        n.name,
        instance && instance.state === "running" ? (instance.observedVersion?.version ?? null) : null,
      ];
    }),
  );
}
const untilVersions = (expected: Record<string, string | null>, timeoutMs = 60_000) =>
  waitFor(
    `nodes on ${JSON.stringify(expected)}`,
    async () => {
      const now = await versionsByNode();
      return Object.entries(expected).every(([name, v]) => now[name] === v) ? now : undefined;
    },
    timeoutMs,
    200,
  );

describe("rollouts to real agents", () => {
  let first: string;
  let second: string;

  it("rolls out in batches with an approval pause: one node first, the rest after approval", async () => {
    const v1 = await uploadedVersion("1.0.0");
    first = await createRollout(v1.id, "1.0.0", { batches: [{ count: 1, pauseAfter: "approval" }] });
    await act(first, { type: "start" });
    await untilStatus(first, "awaiting_approval");
    const during = await versionsByNode();
    expect(Object.values(during).filter((v) => v === "1.0.0")).toHaveLength(1);
    expect(Object.values(during).filter((v) => v === null)).toHaveLength(2);
    await act(first, { type: "approve" });
    await untilStatus(first, "completed");
    await untilVersions({ n1: "1.0.0", n2: "1.0.0", n3: "1.0.0" });
  }, 120_000);

  it("skips an offline node and updates it when it returns; a node enrolled later joins too", async () => {
    await stopAgent("n3");
    await waitFor("n3 offline", async () =>
      (await db.node.findFirst({ where: { organizationId, name: "n3", status: "offline" } }))
        ? true
        : undefined,
    );
    const v2 = await uploadedVersion("2.0.0");
    second = await createRollout(v2.id, "2.0.0", {
      batches: [{ percent: 50 }],
      defaults: { offline: "skip" },
    });
    await act(second, { type: "start" });
    await untilStatus(second, "completed");
    await untilVersions({ n1: "2.0.0", n2: "2.0.0", n3: "1.0.0" }); // n3: offline, as it was
    const n3Row = await db.rolloutNode.findUniqueOrThrow({
      where: { rolloutId_nodeId: { rolloutId: second, nodeId: nodeIds.get("n3") as string } },
    });
    expect(n3Row.dispatchedAt).toBeNull();

    const n3 = agents.get("n3");
    startAgent("n3", n3?.config as string);
    await enrollAgent("n4");
    await untilVersions({ n1: "2.0.0", n2: "2.0.0", n3: "2.0.0", n4: "2.0.0" });
    const caughtUp = await db.rolloutNode.findMany({ where: { rolloutId: second, catchUp: true } });
    expect(caughtUp.map((r) => r.nodeId).sort()).toEqual([nodeIds.get("n3"), nodeIds.get("n4")].sort());
    const late = caughtUp.find((r) => r.nodeId === nodeIds.get("n4"));
    expect(late).toMatchObject({ planBatch: null, fromVersionId: null });
  }, 120_000);

  it("a version with a wrong hash fails its batch, which rolls back by itself; nodes keep running 2.0.0", async () => {
    const wrong = createHash("sha256").update("not the artifact").digest("hex");
    const bad = await uploadedVersion("3.0.0-bad", { declaredSha: wrong });
    const rollout = await createRollout(bad.id, "3.0.0-bad", {
      batches: [{ count: 1 }],
      onBatchFailure: "rollback",
    });
    await act(rollout, { type: "start" });
    await untilStatus(rollout, "rolled_back");
    const finished = await db.rolloutEvent.findFirstOrThrow({
      where: { rolloutId: rollout, kind: "batch_finished" },
    });
    expect(finished.message).toMatch(/batch 1 failed/);
    const failedNode = await db.rolloutNode.findFirstOrThrow({
      where: { rolloutId: rollout, dispatchedAt: { not: null } },
    });
    expect(await db.rolloutNode.count({ where: { rolloutId: rollout, dispatchedAt: { not: null } } })).toBe(
      1,
    );
    expect(failedNode.rollbackToVersionId).not.toBeNull();
    const logs = [...agents.values()].map((a) => a.log).join("\n");
    expect(logs).toContain(`artifact SHA-256 mismatch: expected ${wrong}`);
    await untilVersions({ n1: "2.0.0", n2: "2.0.0", n3: "2.0.0", n4: "2.0.0" });
  }, 120_000);

  it("a person's rollback sends every node back to the version it ran before (none: the app is removed)", async () => {
    await act(second, { type: "rollback", note: "back to 1.0.0" });
    await untilStatus(second, "rolled_back");
    await untilVersions({ n1: "1.0.0", n2: "1.0.0", n3: "1.0.0", n4: null });
    expect(await db.appInstance.count({ where: { nodeId: nodeIds.get("n4") } })).toBe(0);
  }, 120_000);
});
