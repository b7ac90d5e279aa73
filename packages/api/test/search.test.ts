/** search.byName (the console's command palette): tenant scope, ranking, kinds, bad input. */
import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { addMember, ORG, OTHER_ORG } from "./actors";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let alice: ApiSession;
let bob: ApiSession;
let viewer: ApiSession;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  alice = await sessionOf(db, "alice@acme.example");
  bob = await sessionOf(db, "bob@globex.example");
  viewer = await addMember(db, ORG, "viewer", "vic@acme.example");
});

afterAll(async () => {
  await testDb?.drop();
});

describe("search.byName", () => {
  it("finds a viewer's own organization's nodes and sites by part of the name, closest first", async () => {
    const { hits } = await callerFor(db, viewer, ORG).search.byName({ query: "plant-7" });
    const sites = hits.filter((h) => h.kind === "site");
    const nodes = hits.filter((h) => h.kind === "node");
    expect(sites.map((s) => s.name)).toEqual(["plant-7"]);
    expect(nodes.length).toBeGreaterThan(0);
    for (const node of nodes) expect(node.name).toContain("plant-7");
    // Ordered by name among equally close matches; the site and status are the second line.
    expect(nodes.map((n) => n.name)).toEqual([...nodes.map((n) => n.name)].sort());
    expect(nodes[0]?.detail).toMatch(/^plant-7 · (online|offline|pending|revoked)$/);
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    const first = await db.node.findUniqueOrThrow({ where: { id: nodes[0]?.id ?? "" } });
    expect(first.organizationId).toBe(acme.id);
  });

  it("puts names that start with the text before names that merely contain it, and honours the limit", async () => {
    const { hits } = await callerFor(db, alice, ORG).search.byName({ query: "acme-plant-9-0", limit: 3 });
    expect(hits.filter((h) => h.kind === "node").map((h) => h.name)).toEqual([
      "acme-plant-9-01",
      "acme-plant-9-02",
      "acme-plant-9-03",
    ]);
    const contains = await callerFor(db, alice, ORG).search.byName({ query: "lant-9-01" });
    expect(contains.hits.map((h) => h.name)).toEqual(["acme-plant-9-01"]);
  });

  it("never shows another organization's names, and treats % and _ as plain text", async () => {
    const acmeHits = await callerFor(db, alice, ORG).search.byName({ query: "globex", limit: 20 });
    expect(acmeHits.hits).toEqual([]);
    const globexHits = await callerFor(db, bob, OTHER_ORG).search.byName({ query: "-", limit: 20 });
    expect(globexHits.hits.length).toBeGreaterThan(0);
    for (const hit of globexHits.hits) expect(hit.name).not.toMatch(/^acme-/);
    expect((await callerFor(db, alice, ORG).search.byName({ query: "%" })).hits).toEqual([]);
    expect((await callerFor(db, alice, ORG).search.byName({ query: "acme_plant" })).hits).toEqual([]);
  });

  it("finds apps by name and rollouts by their app's name, never another organization's", async () => {
    // A rollout of the seeded app (the seed starts none: the demo's are driven by the controller).
    const app = await db.app.findFirstOrThrow({
      where: { name: "telemetry-collector", organization: { slug: ORG } },
      include: { versions: { take: 1 } },
    });
    const version = app.versions[0];
    if (!version) throw new Error("the seed has no telemetry-collector version");
    await db.rollout.create({
      data: { organizationId: app.organizationId, appId: app.id, appVersionId: version.id, selector: "" },
    });
    const { hits } = await callerFor(db, viewer, ORG).search.byName({ query: "telemetry" });
    const apps = hits.filter((h) => h.kind === "app");
    expect(apps.map((a) => a.name)).toEqual(["telemetry-collector"]);
    const rollouts = hits.filter((h) => h.kind === "rollout");
    expect(rollouts.length).toBeGreaterThan(0);
    for (const rollout of rollouts) expect(rollout.name).toMatch(/^telemetry-collector → \S+$/);
    const row = await db.rollout.findUniqueOrThrow({ where: { id: rollouts[0]?.id ?? "" } });
    expect(row.appId).toBe(apps[0]?.id);
    const globex = await callerFor(db, bob, OTHER_ORG).search.byName({ query: "telemetry", limit: 20 });
    expect(globex.hits.filter((h) => h.kind === "app" || h.kind === "rollout")).toEqual([]);
  });

  it("refuses empty or oversized text with BAD_REQUEST naming the field, and strangers with NOT_FOUND", async () => {
    await expect(callerFor(db, alice, ORG).search.byName({ query: "   " })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringContaining("query"),
    });
    await expect(callerFor(db, alice, ORG).search.byName({ query: "x".repeat(101) })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(callerFor(db, bob, ORG).search.byName({ query: "plant" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(callerFor(db, null, ORG).search.byName({ query: "plant" })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });
});
