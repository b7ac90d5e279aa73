/** The SQL a selector becomes is answered by the GIN index on node.labels (real Postgres). */
import { type Db, Prisma } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSelector, selectorSql } from "../src/domain/selectors";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});

afterAll(async () => {
  await testDb?.drop();
});

async function planOf(selector: string): Promise<string> {
  return db.$transaction(async (tx) => {
    // The demo data is tiny; without this the planner rightly prefers a sequential scan.
    await tx.$executeRaw`SET LOCAL enable_seqscan = off`;
    const rows = await tx.$queryRaw<Array<{ "QUERY PLAN": string }>>(
      Prisma.sql`EXPLAIN SELECT id FROM node WHERE ${selectorSql(parseSelector(selector))}`,
    );
    return rows.map((row) => row["QUERY PLAN"]).join("\n");
  });
}

describe("selectorSql", () => {
  it.each([
    ["site=plant-7", "@>"],
    ["env in (prod,staging)", "@>"],
    ["gpu", "?"],
    ["gpu,tier!=canary", "?"],
  ])("%s uses node_labels_idx (%s)", async (selector, operator) => {
    const plan = await planOf(selector);
    expect(plan).toContain("Bitmap Index Scan on node_labels_idx");
    expect(plan).toContain(`labels ${operator}`);
  });

  it("passes keys and values as parameters, not SQL text", () => {
    const sql = selectorSql(parseSelector("a=b,c in (d),e"));
    expect(sql.values).toEqual(['{"a":"b"}', '{"c":"d"}', "e"]);
    expect(sql.sql).not.toMatch(/"a"|'b'/);
  });
});
