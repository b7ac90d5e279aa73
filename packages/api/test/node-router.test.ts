import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let alice: ApiSession;
let bob: ApiSession;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  alice = await sessionOf(db, "alice@acme.example");
  bob = await sessionOf(db, "bob@globex.example");
});

afterAll(async () => {
  await testDb?.drop();
});

async function nodeNamesOf(slug: string): Promise<string[]> {
  const nodes = await db.node.findMany({ where: { organization: { slug } }, select: { name: true } });
  return nodes.map((n) => n.name).sort();
}

describe("node.list", () => {
  it("gives alice in acme every acme node and nothing else", async () => {
    const page = await callerFor(db, alice, "acme").node.list({ limit: 200 });
    const names = page.items.map((n) => n.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names).toEqual(await nodeNamesOf("acme"));
    expect(names.every((name) => name.startsWith("acme-"))).toBe(true);
    expect(page.nextCursor).toBeNull();
  });

  it("returns node details: site, status, labels, agent version", async () => {
    const { items } = await callerFor(db, bob, "globex").node.list({ limit: 1 });
    const node = items[0];
    expect(node).toBeDefined();
    const stored = await db.node.findFirstOrThrow({ where: { name: node?.name }, include: { site: true } });
    expect(node).toEqual({
      id: stored.id,
      name: stored.name,
      site: stored.site?.name ?? null,
      status: stored.status,
      labels: stored.labels,
      agentVersion: stored.agentVersion,
      lastSeenAt: stored.lastSeenAt,
    });
  });

  it("pages through all nodes by cursor without gaps or repeats", async () => {
    const caller = callerFor(db, alice, "acme");
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await caller.node.list({ limit: 5, cursor });
      expect(page.items.length).toBeLessThanOrEqual(5);
      seen.push(...page.items.map((n) => n.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 100);
    const all = await nodeNamesOf("acme");
    expect(seen).toEqual(all);
    expect(pages).toBe(Math.ceil(all.length / 5));
  });

  it("searches node and site names case-insensitively, within the tenant only", async () => {
    const caller = callerFor(db, alice, "acme");
    const site = await db.site.findFirstOrThrow({ where: { organization: { slug: "acme" } } });
    const bySite = await caller.node.list({ limit: 200, search: site.name.toUpperCase() });
    const expected = await db.node.findMany({ where: { siteId: site.id }, select: { name: true } });
    expect(bySite.items.map((n) => n.name).sort()).toEqual(expected.map((n) => n.name).sort());

    const [globexNode] = await nodeNamesOf("globex");
    expect(globexNode).toBeDefined();
    const cross = await caller.node.list({ limit: 200, search: globexNode ?? "" });
    expect(cross.items).toEqual([]);
  });

  it("filters by status", async () => {
    const online = await callerFor(db, alice, "acme").node.list({ limit: 200, status: "online" });
    const expected = await db.node.count({ where: { organization: { slug: "acme" }, status: "online" } });
    expect(online.items).toHaveLength(expected);
    expect(online.items.every((n) => n.status === "online")).toBe(true);
  });
});

describe("node.counts", () => {
  it("counts the active organization's nodes by status", async () => {
    const counts = await callerFor(db, alice, "acme").node.counts();
    const rows = await db.node.groupBy({
      by: ["status"],
      where: { organization: { slug: "acme" } },
      _count: { _all: true },
    });
    const expected = { pending: 0, online: 0, offline: 0, revoked: 0 };
    for (const row of rows) expected[row.status] = row._count._all;
    expect(counts.byStatus).toEqual(expected);
    expect(counts.total).toBe((await nodeNamesOf("acme")).length);
  });
});

describe("tenant isolation", () => {
  it("refuses alice in globex with NOT_FOUND and no data", async () => {
    const caller = callerFor(db, alice, "globex");
    await expect(caller.node.list({ limit: 10 })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(caller.node.counts()).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("refuses bob in acme", async () => {
    await expect(callerFor(db, bob, "acme").node.list({ limit: 10 })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("answers an unknown organization exactly like a foreign one", async () => {
    const unknown = callerFor(db, alice, "initech").node.counts();
    await expect(unknown).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("checks membership in the database, not the session", async () => {
    const carol = await db.user.create({ data: { email: "carol@acme.example", keycloakSubject: "carol" } });
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: "acme" } });
    await db.membership.create({ data: { organizationId: acme.id, userId: carol.id, role: "viewer" } });
    const session: ApiSession = {
      userId: carol.id,
      email: carol.email,
      memberships: [{ organizationId: acme.id, slug: "acme", name: acme.name, role: "viewer" }],
    };
    const caller = callerFor(db, session, "acme");
    await expect(caller.node.counts()).resolves.toMatchObject({ total: expect.any(Number) });

    // Membership withdrawn after sign-in: the stale session must no longer open the door.
    await db.membership.deleteMany({ where: { userId: carol.id } });
    await expect(caller.node.counts()).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("authentication and input", () => {
  it("rejects an unauthenticated caller with UNAUTHORIZED", async () => {
    const anonymous = callerFor(db, null, "acme");
    await expect(anonymous.node.list({ limit: 10 })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(anonymous.node.counts()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("rejects a signed-in caller without an active organization with BAD_REQUEST", async () => {
    await expect(callerFor(db, alice, null).node.list({ limit: 10 })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: "no active organization selected",
    });
  });

  it.each([
    ["a limit of 10000", { limit: 10000 }],
    ["a limit of 0", { limit: 0 }],
    ["a fractional limit", { limit: 2.5 }],
    ["an empty cursor", { limit: 10, cursor: "" }],
    ["a 101-character search", { limit: 10, search: "x".repeat(101) }],
    ["an unknown status", { limit: 10, status: "exploded" }],
  ])("rejects %s with BAD_REQUEST", async (_label, input) => {
    const caller = callerFor(db, alice, "acme");
    // biome-ignore lint/suspicious/noExplicitAny: deliberately invalid input, as an untyped client could send
    await expect(caller.node.list(input as any)).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});
