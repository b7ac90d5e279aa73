/**
 * node.list, node.counts and selectors on an organization of 100,000 nodes: the answers are
 * right at that size and the queries use their indexes. How fast they are is measured by the
 * benchmark, not asserted here (timed assertions on a shared machine only make flaky tests).
 */
import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouterInputs } from "../src";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

const NODES = 100_000;

let testDb: TestDatabase;
let db: Db;
let caller: ReturnType<typeof callerFor>;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  const org = await db.organization.create({ data: { slug: "bigco", name: "Big Co" } });
  const alice = await db.user.findUniqueOrThrow({ where: { email: "alice@acme.example" } });
  await db.membership.create({ data: { organizationId: org.id, userId: alice.id, role: "viewer" } });
  await db.$executeRaw`
    INSERT INTO site (id, organization_id, name, updated_at)
    SELECT gen_random_uuid(), ${org.id}::uuid, 'site-' || g, now() FROM generate_series(0, 49) g`;
  await db.$executeRaw`
    INSERT INTO node (id, organization_id, name, site_id, labels, status, agent_version, last_seen_at, updated_at)
    SELECT gen_random_uuid(), ${org.id}::uuid, 'node-' || lpad(g::text, 6, '0'),
           (SELECT id FROM site WHERE organization_id = ${org.id}::uuid AND name = 'site-' || (g % 50)),
           jsonb_build_object('site', 'site-' || (g % 50), 'tier', CASE WHEN g % 20 = 0 THEN 'canary' ELSE 'stable' END)
             || CASE WHEN g % 1000 = 0 THEN '{"gpu":"yes"}'::jsonb ELSE '{}'::jsonb END,
           (ARRAY['online','offline','pending']::node_status[])[1 + g % 3],
           '1.' || (g % 7), now() - (g || ' seconds')::interval, now()
    FROM generate_series(1, ${NODES}) g`;
  await db.$executeRaw`ANALYZE node`;
  await db.$executeRaw`ANALYZE site`;
  caller = callerFor(db, await sessionOf(db, "alice@acme.example"), "bigco");
}, 300_000);

afterAll(async () => {
  await testDb?.drop();
});

type ListInput = RouterInputs["node"]["list"];

describe(`node.list over ${NODES.toLocaleString("en")} nodes`, () => {
  it.each<[string, ListInput, number]>([
    ["first page by name", { limit: 100 }, 100],
    ["selector site=site-7,tier!=canary", { limit: 100, selector: "site=site-7,tier!=canary" }, 100],
    [
      "selector gpu (exists), by last seen",
      { limit: 100, selector: "gpu", sort: { field: "lastSeenAt", direction: "desc" } },
      100,
    ],
    ["search in node names", { limit: 100, search: "NODE-042421" }, 1],
    ["search in site names", { limit: 100, search: "site-49" }, 100],
    [
      "status and sort by agent version",
      { limit: 100, status: "pending", sort: { field: "agentVersion", direction: "desc" } },
      100,
    ],
  ])("%s", async (_label, input, expected) => {
    const result = await caller.node.list(input);
    expect(result.items).toHaveLength(expected);
  });

  it("pages deep by cursor without gaps or repeats", async () => {
    const seen = new Set<string>();
    let cursor: string | null = null;
    for (let i = 0; i < 5; i++) {
      const page: Awaited<ReturnType<typeof caller.node.list>> = await caller.node.list({
        limit: 200,
        cursor,
        sort: { field: "lastSeenAt", direction: "asc" },
      });
      for (const item of page.items) seen.add(item.id);
      cursor = page.nextCursor;
    }
    expect(seen.size).toBe(1000);
    expect(cursor).not.toBeNull();
  });

  it("finds names through the trigram index, not a scan of every node", async () => {
    const rows = await db.$queryRaw<Array<{ "QUERY PLAN": string }>>`
      EXPLAIN SELECT id FROM node WHERE name ILIKE '%node-042421%'`;
    expect(rows.map((row) => row["QUERY PLAN"]).join("\n")).toContain("node_name_trgm_idx");
  });

  it("counts by status", async () => {
    const result = await caller.node.counts();
    expect(result.total).toBe(NODES);
  });
});
