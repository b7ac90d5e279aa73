/**
 * The stored form against a real Postgres: a rollout written step by step reads back as the
 * core's state; a step by a replica without the lease changes nothing (the fence); a step
 * repeated changes nothing more (idempotent); a refused action changes nothing.
 */
import { type Db, FLEET_CHANGED_CHANNEL, Prisma } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { rolloutStrategySchema } from "@edgefleet/rollout";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  actOnRollout,
  insertRollout,
  loadRolloutState,
  lockRollout,
  RolloutStateCache,
  stepRollout,
} from "../src";

let database: TestDatabase;
let db: Db;
let organizationId: string;
let appId: string;
let versionId: string;
const person = { type: "user" as const, id: "someone" };

beforeAll(async () => {
  database = await createMigratedDatabase();
  db = database.db;
  organizationId = (await db.organization.create({ data: { slug: "store", name: "Store" } })).id;
  appId = (await db.app.create({ data: { organizationId, name: "store-app" } })).id;
  versionId = (
    await db.appVersion.create({
      data: {
        organizationId,
        appId,
        version: "1.0.0",
        artifactState: "ready",
        artifactSha256: "e".repeat(64),
      },
    })
  ).id;
  await db.node.createMany({
    data: Array.from({ length: 6 }, (_, i) => ({
      organizationId,
      name: `store-${i}`,
      labels: { fleet: "store" },
      status: i === 5 ? ("pending" as const) : ("online" as const),
    })),
  });
});

afterAll(async () => {
  await database?.drop();
});

async function newStartedRollout(): Promise<string> {
  return db.$transaction(async (tx) => {
    const id = await insertRollout(tx, {
      organizationId,
      appId,
      appVersionId: versionId,
      selector: "fleet=store",
      siteIds: [],
      strategy: rolloutStrategySchema.parse({ batches: [{ count: 2, pauseAfter: "approval" }] }),
      versionLabel: "1.0.0",
      actor: person,
    });
    const started = await actOnRollout(tx, organizationId, id, { type: "start" }, person);
    expect(started.ok).toBe(true);
    return id;
  });
}

const stateOf = (id: string) =>
  db.$transaction(async (tx) => {
    const row = await lockRollout(tx, id);
    if (!row) throw new Error("gone");
    return loadRolloutState(tx, row);
  });

describe("rollout store", () => {
  it("freezes the plan into node rows (approved nodes only) and reads it back", async () => {
    const id = await newStartedRollout();
    const state = await stateOf(id);
    expect(state.status).toBe("running");
    expect(state.plan?.batches.map((b) => b.nodeIds.length)).toEqual([2, 3]);
    expect(await db.rolloutNode.count({ where: { rolloutId: id } })).toBe(5);
    const document = (await db.rollout.findUniqueOrThrow({ where: { id } })).state as {
      plan: { batches: { nodeIds: string[] }[] };
    };
    expect(document.plan.batches.every((b) => b.nodeIds.length === 0)).toBe(true);
    await db.$transaction((tx) => actOnRollout(tx, organizationId, id, { type: "abort" }, person));
  });

  it("a replica without the lease steps nothing; the owner dispatches once, and a repeated step adds nothing", async () => {
    const id = await newStartedRollout();
    await db.$executeRaw(Prisma.sql`
      UPDATE rollout SET lease_owner = 'replica-a', lease_until = now() + interval '1 minute' WHERE id = ${id}::uuid`);
    expect(await stepRollout(db, id, { owner: "replica-b" })).toEqual({
      rolloutId: id,
      skipped: "not_owner",
    });
    expect(await db.rolloutNode.count({ where: { rolloutId: id, dispatchedAt: { not: null } } })).toBe(0);

    const first = await stepRollout(db, id, { owner: "replica-a" });
    expect(first).toMatchObject({ moved: true, dispatched: 2 });
    const again = await stepRollout(db, id, { owner: "replica-a" });
    expect(again).toMatchObject({ moved: false, dispatched: 0 });
    const revisions = await db.node.findMany({ where: { organizationId, desiredRevision: { gt: 0 } } });
    expect(revisions.map((n) => n.desiredRevision)).toEqual([1, 1]);
    const state = await stateOf(id);
    expect(state.dispatches.map((d) => d.nodeId)).toEqual(state.plan?.batches[0]?.nodeIds);
    const events = await db.rolloutEvent.findMany({ where: { rolloutId: id }, orderBy: { id: "asc" } });
    expect(events.map((e) => e.kind)).toEqual(["created", "start", "batch_started", "dispatched"]);
  });

  it("tells live pages (fleet.changes) when a rollout moved", async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const heard: string[] = [];
    client.on("notification", (message) => heard.push(`${message.channel}:${message.payload}`));
    await client.query(`LISTEN ${FLEET_CHANGED_CHANNEL}`);
    await newStartedRollout();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await client.end();
    expect(heard).toContain(`${FLEET_CHANGED_CHANNEL}:${organizationId}`);
  });

  it("refuses an action the status forbids and changes nothing", async () => {
    const id = await newStartedRollout();
    const before = await db.rollout.findUniqueOrThrow({ where: { id } });
    const refused = await db.$transaction((tx) =>
      actOnRollout(tx, organizationId, id, { type: "approve" }, person),
    );
    expect(refused).toMatchObject({
      ok: false,
      reason: "refused",
      refusal: { action: "approve", status: "running" },
    });
    const after = await db.rollout.findUniqueOrThrow({ where: { id } });
    expect(after.stateVersion).toBe(before.stateVersion);
    expect(
      await db.$transaction((tx) =>
        actOnRollout(tx, organizationId, "0190a3c4-0000-7000-8000-000000000000", { type: "pause" }, person),
      ),
    ).toEqual({ ok: false, reason: "not_found" });
  });

  it("a step starts from the state its replica committed last, and never from one someone else replaced", async () => {
    const id = await newStartedRollout();
    await db.$executeRaw(Prisma.sql`
      UPDATE rollout SET lease_owner = 'replica-a', lease_until = now() + interval '1 minute' WHERE id = ${id}::uuid`);
    const cache = new RolloutStateCache();
    const step = () => stepRollout(db, id, { owner: "replica-a", cache });
    const cached = () =>
      db.$transaction(async (tx) => {
        const row = await lockRollout(tx, id);
        if (!row) throw new Error("gone");
        return { cached: cache.get(row), stored: await loadRolloutState(tx, row) };
      });

    expect(await step()).toMatchObject({ moved: true, dispatched: 2 });
    // What the cache holds is what a read gives back: the stored form round-trips.
    let now = await cached();
    expect(now.cached).toBeDefined();
    expect(now.cached).toEqual(now.stored);

    // The first batch runs the version: the step finishes it and waits for approval.
    await db.$executeRaw(Prisma.sql`
      UPDATE app_instance SET state = 'running', observed_version_id = ${versionId}::uuid, state_changed_at = now()
      WHERE app_id = ${appId}::uuid AND node_id = ANY(${now.stored.dispatches.map((d) => d.nodeId)}::uuid[])`);
    expect(await step()).toMatchObject({ moved: true, dispatched: 0 });
    now = await cached();
    expect(now.stored.status).toBe("awaiting_approval");
    expect(now.cached).toEqual(now.stored);

    // A person approves (another writer): the cached state is stale and is not used.
    const approved = await db.$transaction((tx) =>
      actOnRollout(tx, organizationId, id, { type: "approve" }, person),
    );
    expect(approved.ok).toBe(true);
    expect((await cached()).cached).toBeUndefined();
    expect(await step()).toMatchObject({ moved: true, dispatched: 3 });
    now = await cached();
    expect(now.cached).toEqual(now.stored);

    // And the step really starts from the cache: given a "paused" at the stored version, it
    // dispatches nothing and writes that state (where a read would have said "running").
    const other = await newStartedRollout();
    await db.$executeRaw(Prisma.sql`
      UPDATE rollout SET lease_owner = 'replica-a', lease_until = now() + interval '1 minute' WHERE id = ${other}::uuid`);
    const row = await db.rollout.findUniqueOrThrow({ where: { id: other } });
    const stored = await stateOf(other);
    cache.put(other, row.stateVersion, { ...stored, status: "paused" });
    expect(await stepRollout(db, other, { owner: "replica-a", cache })).toMatchObject({ dispatched: 0 });
    expect(stored.status).toBe("running");
    expect((await stateOf(other)).status).toBe("paused");
  });
});
