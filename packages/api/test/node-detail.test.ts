/** node.byId, node.counts (with degraded) and node.breakdown against a seeded database. */
import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let alice: ApiSession;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  alice = await sessionOf(db, "alice@acme.example");
});

afterAll(async () => {
  await testDb?.drop();
});

describe("node.byId", () => {
  it("returns identity, labels, lifecycle times and app instances with versions", async () => {
    const stored = await db.node.findFirstOrThrow({
      where: { organization: { slug: "acme" }, appInstances: { some: {} } },
      include: { site: true, appInstances: { include: { app: true, desiredVersion: true } } },
    });
    const node = await callerFor(db, alice, "acme").node.byId({ id: stored.id });
    expect(node).toMatchObject({
      id: stored.id,
      name: stored.name,
      site: { id: stored.siteId, name: stored.site?.name },
      status: stored.status,
      labels: stored.labels,
      enrolledAt: stored.enrolledAt,
      lastSeenAt: stored.lastSeenAt,
      revokedAt: null,
    });
    expect(node.apps.map((a) => [a.app, a.desiredVersion]).sort()).toEqual(
      stored.appInstances.map((i) => [i.app.name, i.desiredVersion.version]).sort(),
    );
  });

  it("answers another organization's node and an unknown id with NOT_FOUND", async () => {
    const globex = await db.node.findFirstOrThrow({ where: { organization: { slug: "globex" } } });
    const caller = callerFor(db, alice, "acme");
    await expect(caller.node.byId({ id: globex.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(caller.node.byId({ id: "0190a000-0000-7000-8000-000000000000" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(caller.node.byId({ id: "not-a-uuid" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});

describe("node.counts and node.breakdown", () => {
  it("counts online nodes with a failed app as degraded", async () => {
    const caller = callerFor(db, alice, "acme");
    const before = await caller.node.counts();
    expect(before.degraded).toBe(0);
    const instance = await db.appInstance.findFirstOrThrow({
      where: { organization: { slug: "acme" }, node: { status: "online" } },
    });
    await db.appInstance.update({ where: { id: instance.id }, data: { state: "failed" } });
    const after = await caller.node.counts();
    expect(after.degraded).toBe(1);
    expect(after.byStatus).toEqual(before.byStatus);
  });

  it("counts nodes per agent version within the organization", async () => {
    const { byAgentVersion } = await callerFor(db, alice, "acme").node.breakdown();
    const rows = await db.node.groupBy({
      by: ["agentVersion"],
      where: { organization: { slug: "acme" } },
      _count: { _all: true },
    });
    expect(byAgentVersion).toHaveLength(rows.length);
    for (const row of rows) {
      expect(byAgentVersion).toContainEqual({ agentVersion: row.agentVersion, total: row._count._all });
    }
  });
});
