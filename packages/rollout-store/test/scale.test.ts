/**
 * Scale: a rollout of 10,000 nodes on 20 sites. Starting it (the plan frozen into 10,000 rows)
 * and the step that commits a batch of all of them stay within seconds, and an idle step (nothing
 * to do) reads and decides in well under one. Bounds are generous: the machine is shared.
 */
import { Prisma } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { rolloutStrategySchema } from "@edgefleet/rollout";
import { afterAll, expect, it } from "vitest";
import { actOnRollout, insertRollout, stepRollout } from "../src";

const NODES = 10_000;
let database: TestDatabase;

afterAll(async () => {
  await database?.drop();
});

it("starts a 10,000-node rollout and commits a 10,000-node batch in seconds", async () => {
  database = await createMigratedDatabase();
  const db = database.db;
  const organizationId = (await db.organization.create({ data: { slug: "scale", name: "Scale" } })).id;
  const appId = (await db.app.create({ data: { organizationId, name: "scale-app" } })).id;
  const versionId = (
    await db.appVersion.create({
      data: {
        organizationId,
        appId,
        version: "1.0.0",
        artifactState: "ready",
        artifactSha256: "f".repeat(64),
      },
    })
  ).id;
  await db.$executeRaw(Prisma.sql`
    INSERT INTO site (id, organization_id, name, updated_at)
    SELECT gen_random_uuid(), ${organizationId}::uuid, 'site-' || s, now() FROM generate_series(1, 20) s`);
  await db.$executeRaw(Prisma.sql`
    INSERT INTO node (id, organization_id, name, labels, status, site_id, updated_at)
    SELECT gen_random_uuid(), ${organizationId}::uuid, 'node-' || n, '{"fleet":"scale"}', 'online',
      (SELECT id FROM site WHERE name = 'site-' || (1 + n % 20)), now()
    FROM generate_series(1, ${NODES}) n`);

  let started = Date.now();
  const id = await db.$transaction(
    async (tx) => {
      const id = await insertRollout(tx, {
        organizationId,
        appId,
        appVersionId: versionId,
        selector: "fleet=scale",
        siteIds: [],
        strategy: rolloutStrategySchema.parse({ batches: [{ percent: 100 }] }),
        versionLabel: "1.0.0",
        actor: { type: "system", id: "scale" },
      });
      await actOnRollout(tx, organizationId, id, { type: "start" }, { type: "system", id: "scale" });
      return id;
    },
    { timeout: 120_000 },
  );
  const startMs = Date.now() - started;

  started = Date.now();
  const step = await stepRollout(db, id);
  const commitMs = Date.now() - started;
  expect(step).toMatchObject({ dispatched: NODES });

  started = Date.now();
  expect(await stepRollout(db, id)).toMatchObject({ moved: false, dispatched: 0 });
  const idleMs = Date.now() - started;

  console.log(`10,000 nodes: start ${startMs} ms, batch commit ${commitMs} ms, idle step ${idleMs} ms`);
  expect(await db.node.count({ where: { organizationId, desiredRevision: 1 } })).toBe(NODES);
  expect(startMs).toBeLessThan(15_000);
  expect(commitMs).toBeLessThan(15_000);
  expect(idleMs).toBeLessThan(5_000);
}, 120_000);
