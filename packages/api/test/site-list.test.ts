/** site.list: the organization's sites with node counts per status. */
import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerFor, sessionOf } from "./callers";
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

describe("site.list", () => {
  it("lists acme's sites with node counts per status, and a row for site-less nodes", async () => {
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: "acme" } });
    await db.node.create({ data: { organizationId: acme.id, name: "acme-loose-01", status: "offline" } });
    const alice = await sessionOf(db, "alice@acme.example");
    const sites = await callerFor(db, alice, "acme").site.list();

    const stored = await db.site.findMany({ where: { organizationId: acme.id }, include: { nodes: true } });
    expect(sites.map((s) => s.name)).toEqual([...stored.map((s) => s.name).sort(), null]);
    for (const site of stored) {
      const row = sites.find((s) => s.id === site.id);
      expect(row?.total).toBe(site.nodes.length);
      expect(row?.byStatus.online).toBe(site.nodes.filter((n) => n.status === "online").length);
      expect(row?.byStatus.pending).toBe(site.nodes.filter((n) => n.status === "pending").length);
    }
    expect(sites.at(-1)).toMatchObject({ id: null, total: 1, byStatus: { offline: 1 } });
  });

  it("shows nothing of another organization and refuses non-members", async () => {
    const bob = await sessionOf(db, "bob@globex.example");
    const sites = await callerFor(db, bob, "globex").site.list();
    expect(sites.every((s) => s.name?.startsWith("hub-"))).toBe(true);
    await expect(callerFor(db, bob, "acme").site.list()).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
