import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

// Moving a node to another site (issue 8 #2): its credentials name its site, and reports it sent
// from the site it left stay its own for a day (`former_sites`). That the gateway hears of the move
// and sends the node new credentials is apps/gateway/test/site-scope.integration.test.ts's.

let testDb: TestDatabase;
let db: Db;
let alice: ApiSession;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  // alice owns acme (the seed).
  alice = await sessionOf(db, "alice@acme.example");
});

afterAll(async () => {
  await testDb?.drop();
});

describe("node.moveToSite", () => {
  it("moves a node, remembers the site it left and audits it", async () => {
    const caller = callerFor(db, alice, "acme");
    const sites = await db.site.findMany({
      where: { organization: { slug: "acme" } },
      orderBy: { name: "asc" },
    });
    const [from, to] = sites;
    if (!from || !to) throw new Error("the seed has two acme sites");
    const node = await db.node.findFirstOrThrow({ where: { siteId: from.id, status: { not: "revoked" } } });
    const before = Date.now();
    const after = await caller.node.moveToSite({ id: node.id, siteId: to.id });
    expect(after).toEqual({ id: node.id, siteId: to.id, site: to.name });
    const row = await db.node.findUniqueOrThrow({ where: { id: node.id } });
    expect(row.siteId).toBe(to.id);
    const left = (row.formerSites as Record<string, number>)[String(from.wireId)];
    expect(left).toBeGreaterThanOrEqual(before - 1_000);
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: "node.move", targetId: node.id } });
    expect(audit.before).toMatchObject({ siteId: from.id, site: from.name });
    expect(audit.after).toMatchObject({ siteId: to.id, site: to.name });

    // To no site, then back: each site it left is remembered; moving to where it is is a no-op.
    await caller.node.moveToSite({ id: node.id, siteId: null });
    await caller.node.moveToSite({ id: node.id, siteId: from.id });
    await caller.node.moveToSite({ id: node.id, siteId: from.id });
    const back = await db.node.findUniqueOrThrow({ where: { id: node.id } });
    expect(Object.keys(back.formerSites as object).sort()).toEqual(
      [String(from.wireId), String(to.wireId), "none"].sort(),
    );
  });

  it("refuses another organization's site or node as not found, and a revoked node", async () => {
    const caller = callerFor(db, alice, "acme");
    const node = await db.node.findFirstOrThrow({
      where: { organization: { slug: "acme" }, status: { not: "revoked" } },
    });
    const foreignSite = await db.site.findFirstOrThrow({ where: { organization: { slug: "globex" } } });
    const foreignNode = await db.node.findFirstOrThrow({ where: { organization: { slug: "globex" } } });
    await expect(caller.node.moveToSite({ id: node.id, siteId: foreignSite.id })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringContaining("siteId"),
    });
    await expect(caller.node.moveToSite({ id: foreignNode.id, siteId: null })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect((await db.node.findUniqueOrThrow({ where: { id: foreignNode.id } })).siteId).toBe(
      foreignNode.siteId,
    );
    const revoked = await db.node.update({
      where: { id: node.id },
      data: { status: "revoked", revokedAt: new Date() },
    });
    await expect(caller.node.moveToSite({ id: revoked.id, siteId: null })).rejects.toMatchObject({
      code: "CONFLICT",
    });
  });
});
