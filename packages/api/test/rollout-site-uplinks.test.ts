/**
 * rollout.siteUplinks (issue 11, #4): each site's budget, its uplink as the gateway's meter stored
 * it (rollout_site_uplink), its nodes pulling and queued behind the site's concurrent-download
 * limit, and its artifact cache from the controller's events; another organization sees nothing.
 */
import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { addMember, ORG, OTHER_ORG } from "./actors";
import { callerFor } from "./callers";
import { labelledNodes, readyApp, settle } from "./rollout-fixtures";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let operator: ApiSession;
let viewer: ApiSession;
let outsider: ApiSession;
let acmeId: string;
let app: Awaited<ReturnType<typeof readyApp>>;
let plantA: string;
let plantB: string;
let rolloutId: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  operator = await addMember(db, ORG, "operator", "uplink-op@acme.example");
  viewer = await addMember(db, ORG, "viewer", "uplink-viewer@acme.example");
  outsider = await addMember(db, OTHER_ORG, "owner", "uplink-owner@globex.example");
  acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: ORG } })).id;
  app = await readyApp(db, acmeId, "uplink-app", ["1.0.0", "2.0.0"]);
  plantA = (await db.site.create({ data: { organizationId: acmeId, name: "uplink-a" } })).id;
  plantB = (await db.site.create({ data: { organizationId: acmeId, name: "uplink-b" } })).id;
  await labelledNodes(db, acmeId, "upa", 3, { fleet: "uplink" }, { siteId: plantA });
  await labelledNodes(db, acmeId, "upb", 3, { fleet: "uplink" }, { siteId: plantB });

  const created = await callerFor(db, operator, ORG).rollout.create({
    appVersionId: app.versions["2.0.0"] as string,
    target: { selector: "fleet=uplink" },
    strategy: {
      batches: [{ percent: 100 }],
      siteBandwidth: {
        bytesPerSecond: 2_000_000,
        sites: { [plantB]: { bytesPerSecond: 500_000, concurrentDownloads: 1 } },
      },
    },
  });
  rolloutId = created.id;
  await callerFor(db, operator, ORG).rollout.start({ id: rolloutId });
  // The controller's steps: batch 1 starts; plant B's limit of one download holds two of its nodes.
  await settle(db, rolloutId);
  await db.$executeRaw`
    UPDATE app_instance SET state = 'pulling', target_version_id = desired_version_id
    WHERE app_id = ${app.appId}::uuid AND desired_version_id = ${app.versions["2.0.0"]}::uuid`;
  // What the gateway's meter writes from the hub's /leafz, and the controller's cache events.
  await db.rolloutSiteUplink.create({
    data: {
      organizationId: acmeId,
      rolloutId,
      siteId: plantB,
      leafName: "acme-uplink-b",
      linked: true,
      bytes: 3_000_000,
      rateBps: 400_000,
      peakBps: 520_000,
      readings: 4,
      counters: { "7": 3_000_000 },
      readAt: new Date(),
      history: [
        [2_000, 1_000_000, 2_000],
        [4_000, 1_040_000, 2_000],
        [6_000, 960_000, 2_000],
      ],
    },
  });
  await db.rolloutEvent.createMany({
    data: [
      {
        organizationId: acmeId,
        rolloutId,
        kind: "site_cache",
        message: "site uplink-a: seeded",
        actorType: "system",
        data: { siteId: plantA, siteName: "uplink-a", status: "seeded", reason: null },
      },
      {
        organizationId: acmeId,
        rolloutId,
        kind: "site_cache",
        message: "site uplink-b: no site cache",
        actorType: "system",
        data: {
          siteId: plantB,
          siteName: "uplink-b",
          status: "no_cache",
          reason: "the site's leaf runs no JetStream (or is not connected)",
        },
      },
      { organizationId: acmeId, rolloutId, kind: "site_cache_ready", message: "ready", actorType: "system" },
    ],
  });
});

afterAll(async () => {
  await testDb?.drop();
});

describe("rollout.siteUplinks", () => {
  it("shows each site's budget, measured use, downloads and cache, to a viewer too", async () => {
    const uplinks = await callerFor(db, viewer, ORG).rollout.siteUplinks({ id: rolloutId });
    expect(uplinks).toMatchObject({ rolloutId, budgeted: true, moving: true });
    expect(uplinks.sites.map((s) => s.siteName)).toEqual(["uplink-a", "uplink-b"]);
    const [a, b] = uplinks.sites;
    expect(a).toMatchObject({
      budget: { bytesPerSecond: 2_000_000, concurrentDownloads: null },
      uplink: null,
      downloads: { nodes: 3, pulling: 3, updating: 3, queued: 0 },
      cache: { status: "seeded", reason: null },
    });
    expect(b).toMatchObject({
      budget: { bytesPerSecond: 500_000, concurrentDownloads: 1 },
      uplink: {
        linked: true,
        bytes: 3_000_000,
        currentBytesPerSecond: 400_000,
        peakBytesPerSecond: 520_000,
        peakOfBudget: 1.04,
      },
      downloads: { nodes: 3, pulling: 1, updating: 1, queued: 2 },
      cache: { status: "no_cache", reason: expect.stringContaining("runs no JetStream") },
    });
    // The chart: the measured site, rate per interval against its byte budget.
    expect(uplinks.chart).toEqual({
      siteId: plantB,
      siteName: "uplink-b",
      budgetBytesPerSecond: 500_000,
      points: [
        [2_000, 500_000],
        [4_000, 520_000],
        [6_000, 480_000],
      ],
    });
  });

  it("drops the current rate when the measurement is stale, keeping peak and bytes", async () => {
    await db.rolloutSiteUplink.update({
      where: { rolloutId_siteId: { rolloutId, siteId: plantB } },
      data: { updatedAt: new Date(Date.now() - 60_000) },
    });
    const uplinks = await callerFor(db, viewer, ORG).rollout.siteUplinks({ id: rolloutId });
    expect(uplinks.sites[1]?.uplink).toMatchObject({
      currentBytesPerSecond: null,
      peakBytesPerSecond: 520_000,
      bytes: 3_000_000,
    });
  });

  it("answers another organization NOT_FOUND, and refuses a malformed id naming it", async () => {
    await expect(
      callerFor(db, outsider, OTHER_ORG).rollout.siteUplinks({ id: rolloutId }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      callerFor(db, viewer, ORG).rollout.siteUplinks({ id: rolloutId, chartSiteId: "plant-b" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("chartSiteId") });
  });

  it("says a rollout without a budget is not budgeted, and has no measurements", async () => {
    await callerFor(db, operator, ORG).rollout.abort({ id: rolloutId });
    const plain = await callerFor(db, operator, ORG).rollout.create({
      appVersionId: app.versions["1.0.0"] as string,
      target: { selector: "fleet=uplink" },
      strategy: { batches: [{ percent: 100 }] },
    });
    const uplinks = await callerFor(db, viewer, ORG).rollout.siteUplinks({ id: plain.id });
    expect(uplinks).toMatchObject({ budgeted: false, moving: false, chart: null });
    expect(uplinks.sites.every((s) => s.uplink === null && s.budget.bytesPerSecond === null)).toBe(true);
  });
});
