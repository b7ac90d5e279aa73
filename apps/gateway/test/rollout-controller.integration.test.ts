import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Db, INSTANCES_CHANGED_CHANNEL, Prisma } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { type RunningNats, startPlainHub, waitFor } from "@edgefleet/nats-tenancy/testing";
import { rolloutStrategySchema } from "@edgefleet/rollout";
import { actOnRollout, insertRollout } from "@edgefleet/rollout-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";

// The rollout controller with TWO real gateway processes: one holds the rollout's lease and
// drives it; it is kill -9'ed in the middle of a batch; the other takes the rollout over within
// seconds, and at the end every node was dispatched exactly once (its desired revision rose by
// exactly one) and none was left behind. The agents are played on the database (a node reports
// `running` a moment after its desired version changed): the controller is the point here.

const NODES = 40;
const LEASE_MS = 2_000;
const workDir = mkdtempSync(join(tmpdir(), "ef-rollout-ctl-"));

let hub: RunningNats;
let database: TestDatabase;
let db: Db;
let organizationId: string;
let appId: string;
let versionId: string;
const gateways = new Map<string, GatewayProcess>();
let playing = true;
let player: Promise<void>;

beforeAll(async () => {
  hub = await startPlainHub();
  database = await createMigratedDatabase();
  db = database.db;
  const organization = await db.organization.create({ data: { slug: "ctl", name: "Controller" } });
  organizationId = organization.id;
  const app = await db.app.create({ data: { organizationId, name: "ctl-app" } });
  appId = app.id;
  versionId = (
    await db.appVersion.create({
      data: {
        organizationId,
        appId,
        version: "1.0.0",
        artifactSource: "upload",
        artifactState: "ready",
        artifactSha256: "d".repeat(64),
        artifactSize: 10n,
        runSpec: { command: ["./ctl"] },
      },
    })
  ).id;
  await db.node.createMany({
    data: Array.from({ length: NODES }, (_, i) => ({
      organizationId,
      name: `ctl-${String(i).padStart(2, "0")}`,
      labels: { fleet: "ctl" },
      status: "online" as const,
      lastSeenAt: new Date(),
    })),
  });
  player = playAgents();
  for (const id of ["replica-a", "replica-b"]) {
    const gateway = await GatewayProcess.start({
      DATABASE_URL: database.url,
      NATS_URL: hub.url,
      MIMIR_URL: requireTestEnv("MIMIR_URL"),
      GATEWAY_REPLICA_ID: id,
      GATEWAY_ROLLOUT_TICK_MS: "200",
      GATEWAY_ROLLOUT_LEASE_MS: String(LEASE_MS),
      GATEWAY_HEALTH_INTERVAL_MS: "500",
      GATEWAY_ARTIFACT_CACHE_DIR: join(workDir, `cache-${id}`),
    });
    gateways.set(id, gateway);
  }
  await Promise.all([...gateways.values()].map((g) => g.waitForReadyz(200)));
});

afterAll(async () => {
  playing = false;
  await player;
  for (const gateway of gateways.values()) await gateway.kill();
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

/** Agents on the database: alive (heartbeats), and running a new desired version ~0.6 s after it changed. */
async function playAgents(): Promise<void> {
  while (playing) {
    await db.$executeRaw(
      Prisma.sql`UPDATE node SET last_seen_at = now() WHERE organization_id = ${organizationId}::uuid`,
    );
    const reported = await db.$executeRaw(Prisma.sql`
      UPDATE app_instance SET observed_version_id = desired_version_id, state = 'running', state_changed_at = now()
      WHERE organization_id = ${organizationId}::uuid
        AND observed_version_id IS DISTINCT FROM desired_version_id
        AND updated_at < now() - interval '600 milliseconds'`);
    // What the status writer does after storing such reports: wake the rollout controllers.
    if (reported > 0) {
      await db.$executeRaw(Prisma.sql`SELECT pg_notify(${INSTANCES_CHANGED_CHANNEL}, ${organizationId})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

const rolloutRow = (id: string) =>
  db.rollout.findUniqueOrThrow({ where: { id }, select: { status: true, leaseOwner: true, state: true } });
const dispatchedIn = (rolloutId: string, batch: number) =>
  db.rolloutNode.count({ where: { rolloutId, dispatchBatch: batch, dispatchedAt: { not: null } } });

describe("rollout controller with two replicas", () => {
  it("hands a rollout over within seconds when the acting replica is kill -9'ed mid-batch; no node updated twice, none left", async () => {
    const strategy = rolloutStrategySchema.parse({
      batches: [{ count: 10 }, { count: 10 }, { count: 10 }],
      disruptionBudget: { maxUpdatingPerSite: { count: 3 } },
      defaults: { timeoutSeconds: 120 },
    });
    const rolloutId = await db.$transaction(async (tx) => {
      const id = await insertRollout(tx, {
        organizationId,
        appId,
        appVersionId: versionId,
        selector: "fleet=ctl",
        siteIds: [],
        strategy,
        versionLabel: "1.0.0",
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

    // Mid-batch: batch 2 (index 1) has some of its nodes dispatched, not all.
    const owner = await waitFor(
      "batch 2 partly dispatched",
      async () => {
        const row = await rolloutRow(rolloutId);
        const dispatched = await dispatchedIn(rolloutId, 1);
        return dispatched > 0 && dispatched < 10 && row.leaseOwner ? row.leaseOwner : undefined;
      },
      30_000,
      50,
    ).catch(async (error) => {
      const row = await db.rollout.findUniqueOrThrow({ where: { id: rolloutId } });
      const logs = [...gateways.values()].map((g) => g.output.join("").slice(-3000));
      throw new Error(
        `${error.message}\n${JSON.stringify({ status: row.status, owner: row.leaseOwner, waits: row.waits, wake: row.wakeAt })}\n${logs.join("\n----\n")}`,
      );
    });
    const victim = gateways.get(owner);
    expect(victim).toBeDefined();
    await victim?.kill();
    const killedAt = Date.now();
    const survivor = [...gateways.keys()].find((id) => id !== owner) as string;

    await waitFor("the other replica takes the lease", async () =>
      (await rolloutRow(rolloutId)).leaseOwner === survivor ? true : undefined,
    );
    const handoverMs = Date.now() - killedAt;
    expect(handoverMs).toBeLessThan(LEASE_MS + 3_000);

    await waitFor(
      "the rollout completes",
      async () => ((await rolloutRow(rolloutId)).status === "completed" ? true : undefined),
      60_000,
    );

    // Exactly one desired revision per node: dispatched once, by one replica or the other.
    const nodes = await db.node.findMany({ where: { organizationId }, select: { desiredRevision: true } });
    expect(nodes.map((n) => n.desiredRevision)).toEqual(Array(NODES).fill(1));
    expect(await db.rolloutNode.count({ where: { rolloutId, dispatchedAt: { not: null } } })).toBe(NODES);
    expect(
      await db.appInstance.count({
        where: { organizationId, observedVersionId: versionId, state: "running" },
      }),
    ).toBe(NODES);
    const dispatchEvents = await db.rolloutEvent.findMany({ where: { rolloutId, kind: "dispatched" } });
    const total = dispatchEvents.reduce((sum, e) => sum + ((e.data as { count: number }).count ?? 0), 0);
    expect(total).toBe(NODES);
    // Both replicas acted: the victim before its death, the survivor after.
    expect(gateways.get(survivor)?.output.join("")).toContain("rollout stepped");
  }, 120_000);
});
