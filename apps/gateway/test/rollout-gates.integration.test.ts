import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type HollowFleet, startHollowFleet } from "@edgefleet/agent-sdk";
import { createEnrollmentToken, type Db, setDesiredAppsForNodes } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import { type RunningNats, startOperatorModeHub, waitFor } from "@edgefleet/nats-tenancy/testing";
import { type RolloutStrategyInput, rolloutStrategySchema } from "@edgefleet/rollout";
import { actOnRollout, insertRollout, loadGateVerdicts } from "@edgefleet/rollout-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";

// Metric gates end to end (issue 11), every part real: hollow agents speaking the protocol and
// reporting per-app CPU every second, the gateway writing it to Mimir with the version label, the
// controller judging the first batch on Mimir (canary vs baseline: Mann–Whitney U, and an absolute
// threshold) and acting on the verdict. A CPU-hog version is stopped after its first batch and
// rolled back by itself; a good version passes and completes.

const NODES = 12;
const CANARY = 4;
const WINDOW_S = 12;
const workDir = mkdtempSync(join(tmpdir(), "ef-rollout-gates-"));

let secrets: TenancySecrets;
let hub: RunningNats;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let fleet: HollowFleet;
let organizationId: string;
let appId: string;
const versions = new Map<string, string>();

const file = (name: string, content: string) => {
  writeFileSync(join(workDir, name), content);
  return join(workDir, name);
};

/** ‰ of one core: the hog burns ~60 % of a core, the others ~10 %; every sample is noisy. */
function appUsage(_app: string, version: string) {
  const noise = (Math.random() - 0.5) * 40;
  return version === "2.0-hog"
    ? { cpu: 600 + noise, mem: 80e6 + noise * 1e5 }
    : { cpu: 100 + noise, mem: 40e6 + noise * 1e5 };
}

async function version(label: string): Promise<string> {
  const row = await db.appVersion.create({
    data: {
      organizationId,
      appId,
      version: label,
      artifactSource: "upload",
      artifactState: "ready",
      artifactSha256: label
        .padEnd(64, "0")
        .replace(/[^0-9a-f]/g, "0")
        .slice(0, 64),
      artifactSize: 10n,
      runSpec: { command: ["./svc"] },
    },
  });
  versions.set(label, row.id);
  return row.id;
}

beforeAll(async () => {
  secrets = await createTenancySecrets("rollout-gates");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  const organization = await db.organization.create({ data: { slug: "gates", name: "Gates" } });
  organizationId = organization.id;
  appId = (await db.app.create({ data: { organizationId, name: "svc" } })).id;
  await version("1.0");
  await version("2.0-hog");
  await version("2.1");
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
    GATEWAY_METRICS_INTERVAL_S: "1",
    GATEWAY_LIVENESS_FLUSH_MS: "200",
    GATEWAY_DESIRED_RESCAN_MS: "1000",
    GATEWAY_ROLLOUT_TICK_MS: "250",
  });
  await gateway.waitForReadyz(200);
  const { token } = await createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(Date.now() + 600_000),
    maxUses: NODES,
    labels: { fleet: "gates", hw: "pi4" },
  });
  fleet = await startHollowFleet({
    count: NODES,
    token,
    servers: [hub.url],
    enrollCreds: secrets.enroll.userCreds,
    namePrefix: "g",
    appUsage,
  });
  const nodeIds = (await db.node.findMany({ where: { organizationId }, select: { id: true } })).map(
    (n) => n.id,
  );
  expect(nodeIds).toHaveLength(NODES);
  // The whole fleet runs 1.0 first: the baseline.
  await setDesiredAppsForNodes(db, organizationId, nodeIds, { put: [versions.get("1.0") as string] });
  await waitFor(
    "every node running 1.0",
    async () =>
      (await db.appInstance.count({
        where: { organizationId, observedVersionId: versions.get("1.0"), state: "running" },
      })) === NODES
        ? true
        : undefined,
    30_000,
  );
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await gateway?.kill();
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

const strategy: RolloutStrategyInput = {
  batches: [
    {
      count: CANARY,
      gates: [
        {
          name: "app-cpu",
          metric: { preset: "app_cpu" },
          windowSeconds: WINDOW_S,
          criterion: { kind: "compare", worse: "higher", tolerance: 0.2 },
          critical: true,
        },
        {
          name: "app-cpu-max",
          metric: { preset: "app_cpu" },
          windowSeconds: WINDOW_S,
          criterion: { kind: "threshold", max: 0.5 },
          critical: true,
        },
      ],
    },
  ],
  defaults: { timeoutSeconds: 120 },
};

async function startRollout(label: string): Promise<string> {
  return db.$transaction(async (tx) => {
    const id = await insertRollout(tx, {
      organizationId,
      appId,
      appVersionId: versions.get(label) as string,
      selector: "fleet=gates",
      siteIds: [],
      strategy: rolloutStrategySchema.parse(strategy),
      versionLabel: label,
      actor: { type: "system", id: "test" },
    });
    const started = await actOnRollout(
      tx,
      organizationId,
      id,
      { type: "start" },
      { type: "system", id: "test" },
    );
    expect(started.ok).toBe(true);
    return id;
  });
}

async function finished(rolloutId: string, status: string): Promise<void> {
  await waitFor(
    `rollout ${status}`,
    async () =>
      (await db.rollout.findUniqueOrThrow({ where: { id: rolloutId } })).status === status ? true : undefined,
    90_000,
    250,
  ).catch(async (error) => {
    const row = await db.rollout.findUniqueOrThrow({ where: { id: rolloutId } });
    throw new Error(
      `${error.message}\n${JSON.stringify({ status: row.status, reason: row.statusReason, waits: row.waits })}\n${gateway.output.join("").slice(-4000)}`,
    );
  });
}

const running = (label: string) =>
  db.appInstance.count({
    where: { organizationId, observedVersionId: versions.get(label), state: "running" },
  });

describe("metric gates on Mimir", () => {
  it("stops a CPU-hog version after its first batch and rolls it back by itself, with the numbers", async () => {
    const rolloutId = await startRollout("2.0-hog");
    await finished(rolloutId, "rolled_back");

    const [verdict, ...more] = await loadGateVerdicts(db, organizationId, rolloutId);
    expect(more).toEqual([]);
    expect(verdict?.batch).toBe(0);
    expect(verdict?.outcome).toBe("fail");
    const compare = verdict?.gates.find((g) => g.gate === "app-cpu");
    expect(compare?.outcome).toBe("fail");
    expect(compare?.canary.nodes).toBe(CANARY);
    expect(compare?.baseline.nodes).toBe(NODES - CANARY);
    expect(compare?.canary.median).toBeGreaterThan(0.5);
    expect(compare?.baseline.median).toBeLessThan(0.15);
    expect(compare?.compare?.pValue).toBeLessThan(0.01);
    expect(compare?.queries.canary).toContain('version="2.0-hog"');
    expect(compare?.chart.canary.length).toBeGreaterThan(0);
    expect(compare?.chart.baseline.length).toBeGreaterThan(0);
    const threshold = verdict?.gates.find((g) => g.gate === "app-cpu-max");
    expect(threshold?.outcome).toBe("fail");
    expect(threshold?.threshold?.breaching).toHaveLength(CANARY);
    expect(verdict?.baseline.match.siteAndHardware).toBe(NODES - CANARY);

    // The bad version reached the first batch only, and every node is back on 1.0.
    expect(await db.rolloutNode.count({ where: { rolloutId, dispatchedAt: { not: null } } })).toBe(CANARY);
    await waitFor(
      "every node back on 1.0",
      async () => ((await running("1.0")) === NODES ? true : undefined),
      30_000,
    );
    const [judged, ...again] = await db.rolloutEvent.findMany({ where: { rolloutId, kind: "gates" } });
    expect(again).toEqual([]);
    expect(judged?.message).toContain("batch 1 metric gates: fail");
    const rollback = await db.rolloutEvent.findFirstOrThrow({
      where: { rolloutId, kind: "rollback_started" },
    });
    expect(rollback.message).toContain("batch 0's metric gates: fail");
  }, 150_000);

  it("lets a good version pass its gates and complete", async () => {
    const rolloutId = await startRollout("2.1");
    await finished(rolloutId, "completed");
    const [verdict] = await loadGateVerdicts(db, organizationId, rolloutId);
    expect(verdict?.outcome).toBe("pass");
    expect(verdict?.gates.map((g) => g.outcome)).toEqual(["pass", "pass"]);
    expect(verdict?.gates[0]?.compare?.relativeDelta).toBeLessThan(0.2);
    await waitFor(
      "every node on 2.1",
      async () => ((await running("2.1")) === NODES ? true : undefined),
      30_000,
    );
  }, 150_000);
});
