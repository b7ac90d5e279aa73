/**
 * Rollouts over tRPC: preview, create, list, detail and actions, with the bad input of issue 10
 * (each refused naming the field, changing nothing), roles and tenancy, audit, and a rollout
 * driven by the controller's step (from @edgefleet/rollout-store) through batches and an approval.
 */
import type { Db } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZodError } from "zod";
import type { ApiSession } from "../src";
import { addMember, ORG, OTHER_ORG } from "./actors";
import { callerFor, sessionOf } from "./callers";
import { agentsRun, labelledNodes, readyApp, settle } from "./rollout-fixtures";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let viewer: ApiSession;
let operator: ApiSession;
let acmeId: string;
let globexId: string;
let app: Awaited<ReturnType<typeof readyApp>>;
let siteA: string;
let siteB: string;

const ops = () => callerFor(db, operator, ORG);

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  viewer = await addMember(db, ORG, "viewer", "vic@acme.example");
  operator = await addMember(db, ORG, "operator", "otto@acme.example");
  acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: ORG } })).id;
  globexId = (await db.organization.findUniqueOrThrow({ where: { slug: OTHER_ORG } })).id;
  app = await readyApp(db, acmeId, "ro-app", ["1.0.0", "2.0.0"]);
  siteA = (
    await db.site.create({ data: { organizationId: acmeId, name: "ro-site-a", timeZone: "Europe/Berlin" } })
  ).id;
  siteB = (await db.site.create({ data: { organizationId: acmeId, name: "ro-site-b" } })).id;
  await labelledNodes(db, acmeId, "ro-a", 6, { fleet: "ro" }, { siteId: siteA });
  await labelledNodes(db, acmeId, "ro-b", 4, { fleet: "ro" }, { siteId: siteB });
  await labelledNodes(db, acmeId, "ro-off", 2, { fleet: "ro" }, { siteId: siteB, status: "offline" });
  await labelledNodes(db, acmeId, "ro-pending", 2, { fleet: "ro" }, { status: "pending" });
  await labelledNodes(db, acmeId, "ro-other", 3, { fleet: "other" });
});

afterAll(async () => {
  await testDb?.drop();
});

async function issuePaths(call: Promise<unknown>): Promise<string[]> {
  try {
    await call;
  } catch (error) {
    if (error instanceof TRPCError && error.cause instanceof ZodError) {
      return error.cause.issues.map((issue) => issue.path.join("."));
    }
    throw error;
  }
  throw new Error("the call was not refused");
}

const input = (overrides: Record<string, unknown> = {}) => ({
  appVersionId: app.versions["2.0.0"] as string,
  target: { selector: "fleet=ro" },
  strategy: { batches: [{ percent: 25, pauseAfter: "approval" as const }, { percent: 50 }] },
  ...overrides,
});

describe("rollout preview", () => {
  it("plans batches with per-site counts over enrolled nodes only (pending nodes are never targeted)", async () => {
    const preview = await callerFor(db, viewer, ORG).rollout.preview(input());
    expect(preview.totals).toEqual({ target: 12, toUpdate: 12, alreadyCurrent: 0, offline: 2 });
    expect(preview.batches.map((b) => b.nodes)).toEqual([3, 6, 3]);
    const first = preview.batches[0];
    expect(first?.sites.map((s) => s.siteName).sort()).toEqual(["ro-site-a", "ro-site-b"]);
    expect(preview.sites.find((s) => s.siteId === siteA)).toMatchObject({
      timeZone: "Europe/Berlin",
      targetNodes: 6,
    });
    // Limited to a site: only its nodes.
    const one = await callerFor(db, viewer, ORG).rollout.preview(input({ target: { siteIds: [siteA] } }));
    expect(one.totals.target).toBe(6);
  });
});

describe("bad input (each names its field and changes nothing)", () => {
  it("unknown or foreign version and sites: NOT_FOUND", async () => {
    const foreign = await readyApp(db, globexId, "ro-foreign", ["1.0.0"]);
    const globexSite = (await db.site.create({ data: { organizationId: globexId, name: "ro-globex" } })).id;
    for (const bad of [
      input({ appVersionId: "0190a3c4-0000-7000-8000-000000000000" }),
      input({ appVersionId: foreign.versions["1.0.0"] }),
      input({ target: { selector: "fleet=ro", siteIds: [globexSite] } }),
      input({
        strategy: {
          batches: [{ count: 1 }],
          disruptionBudget: { maxUpdatingPerSite: { count: 2 }, sites: { [globexSite]: { count: 1 } } },
        },
      }),
    ]) {
      await expect(ops().rollout.create(bad)).rejects.toMatchObject({ code: "NOT_FOUND" });
      await expect(ops().rollout.preview(bad)).rejects.toMatchObject({ code: "NOT_FOUND" });
    }
  });

  it("a version whose artifact is not ready, a selector matching nothing, bad selectors, overlapping batches", async () => {
    const pending = await db.appVersion.create({
      data: { organizationId: acmeId, appId: app.appId, version: "3.0.0-pending", artifactSource: "upload" },
    });
    expect(await issuePaths(ops().rollout.create(input({ appVersionId: pending.id })))).toEqual([
      "appVersionId",
    ]);
    expect(await issuePaths(ops().rollout.create(input({ target: { selector: "fleet=nowhere" } })))).toEqual([
      "target",
    ]);
    expect(await issuePaths(ops().rollout.create(input({ target: { selector: "fleet in (" } })))).toEqual([
      "target.selector",
    ]);
    expect(
      await issuePaths(
        ops().rollout.create(input({ strategy: { batches: [{ percent: 60 }, { percent: 50 }] } })),
      ),
    ).toEqual(["strategy.batches.1.percent"]);
    expect(
      await issuePaths(
        ops().rollout.create(
          input({
            strategy: {
              batches: [{ count: 1 }],
              maintenanceWindows: { default: [{ days: ["mon"], start: "25:00", end: "04:00" }] },
            },
          }),
        ),
      ),
    ).toEqual(["strategy.maintenanceWindows.default.0.start"]);
    expect(await db.rollout.count({ where: { appId: app.appId } })).toBe(0);
  });

  it("a site with an invalid time zone: 400 naming it", async () => {
    const site = await db.site.create({
      data: { organizationId: acmeId, name: "ro-mars", timeZone: "Mars/Olympus" },
    });
    await labelledNodes(db, acmeId, "ro-mars", 1, { fleet: "mars" }, { siteId: site.id });
    const paths = await issuePaths(ops().rollout.preview(input({ target: { selector: "fleet=mars" } })));
    expect(paths[0]).toMatch(/^target\.nodes\.0\.siteTimeZone$/);
  });

  it("a viewer cannot create or act", async () => {
    await expect(callerFor(db, viewer, ORG).rollout.create(input())).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });
});

describe("create, conflicts, actions, audit", () => {
  let rolloutId: string;

  it("creates a pending rollout, lists it per app, and refuses an overlapping one naming it", async () => {
    const created = await ops().rollout.create(input());
    rolloutId = created.id;
    expect(created).toMatchObject({
      status: "pending",
      appName: "ro-app",
      version: "2.0.0",
      target: { selector: "fleet=ro" },
    });
    const listed = await callerFor(db, viewer, ORG).rollout.list({ appId: app.appId });
    expect(listed.items.map((r) => r.id)).toEqual([created.id]);
    await expect(ops().rollout.create(input({ target: { siteIds: [siteA] } }))).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining(created.id),
    });
    // A target with no node in common is fine.
    const other = await ops().rollout.create(input({ target: { selector: "fleet=other" } }));
    await ops().rollout.abort({ id: other.id });
    expect(await db.auditLog.count({ where: { action: "rollout.create", targetId: created.id } })).toBe(1);
  });

  it("refuses actions that the status forbids (CONFLICT, with why) and viewers; writes no audit row then", async () => {
    const audits = await db.auditLog.count();
    await expect(ops().rollout.approve({ id: rolloutId })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("possible now: start, abort"),
    });
    await expect(callerFor(db, viewer, ORG).rollout.start({ id: rolloutId })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    const bob = await sessionOf(db, "bob@globex.example");
    await expect(callerFor(db, bob, ORG).rollout.start({ id: rolloutId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(callerFor(db, bob, OTHER_ORG).rollout.start({ id: rolloutId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(callerFor(db, bob, OTHER_ORG).rollout.byId({ id: rolloutId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect(await db.auditLog.count()).toBe(audits);
    expect((await db.rollout.findUniqueOrThrow({ where: { id: rolloutId } })).status).toBe("pending");
  });

  it("starts (plan frozen in rollout_node), moves batch by batch with an approval, completes, rolls back", async () => {
    await ops().rollout.start({ id: rolloutId });
    expect(await db.rolloutNode.count({ where: { rolloutId } })).toBe(12);
    await settle(db, rolloutId);
    let detail = await ops().rollout.byId({ id: rolloutId });
    expect(detail.status).toBe("running");
    expect(detail.batches[0]?.byOutcome).toMatchObject({ updating: 3 });
    expect(detail.batches[0]?.byInstanceState).toMatchObject({ pending: 3 });

    await agentsRun(db, app.appId, app.versions["2.0.0"] as string);
    await settle(db, rolloutId);
    detail = await ops().rollout.byId({ id: rolloutId });
    expect(detail.status).toBe("awaiting_approval");
    expect(detail.batches[0]).toMatchObject({ status: "succeeded", byOutcome: { succeeded: 3 } });
    expect(detail.actions.approve).toEqual({ allowed: true, reason: null });
    const seen = await callerFor(db, viewer, ORG).rollout.byId({ id: rolloutId });
    expect(seen.actions.approve).toEqual({ allowed: false, reason: expect.stringContaining("operator") });

    await ops().rollout.approve({ id: rolloutId });
    for (let i = 0; i < 4; i++) {
      await settle(db, rolloutId);
      await agentsRun(db, app.appId, app.versions["2.0.0"] as string);
    }
    await settle(db, rolloutId);
    detail = await ops().rollout.byId({ id: rolloutId });
    expect(detail.status).toBe("completed");
    const last = detail.timeline.at(-1);
    expect(last).toMatchObject({ dispatched: 10, running: 10, rolledBack: 0 });
    expect(detail.timeline[0]?.dispatched).toBeGreaterThan(0);
    // The two offline nodes were skipped, not failed, and not dispatched.
    const skipped = detail.batches.reduce((sum, b) => sum + (b.byOutcome.skipped_offline ?? 0), 0);
    expect(skipped).toBe(2);
    const offline = await callerFor(db, viewer, ORG).rollout.nodes({
      id: rolloutId,
      outcome: "skipped_offline",
    });
    expect(offline.total).toBe(2);
    expect(offline.items.map((n) => n.nodeName).sort()).toEqual(["ro-off-000", "ro-off-001"]);
    expect(offline.items.every((n) => !n.online)).toBe(true);
    const first = await callerFor(db, viewer, ORG).rollout.nodes({ id: rolloutId, batch: 0 });
    expect(first.items.map((n) => n.outcome)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect(
      await db.appInstance.count({ where: { appId: app.appId, observedVersionId: app.versions["2.0.0"] } }),
    ).toBe(10);

    // Each node got exactly one desired revision from the rollout.
    const revisions = await db.node.findMany({
      where: { labels: { equals: { fleet: "ro" } }, status: "online" },
    });
    expect(revisions.every((n) => n.desiredRevision === 1)).toBe(true);

    await ops().rollout.rollback({ id: rolloutId, note: "drill" });
    await settle(db, rolloutId);
    for (let i = 0; i < 4; i++) await settle(db, rolloutId);
    // They had no version before: the app is removed from every node the rollout touched.
    expect(await db.appInstance.count({ where: { appId: app.appId } })).toBe(0);
    await settle(db, rolloutId);
    detail = await ops().rollout.byId({ id: rolloutId });
    expect(detail.status).toBe("rolled_back");
    expect(detail.events.map((e) => e.kind)).toEqual(
      expect.arrayContaining([
        "created",
        "start",
        "approve",
        "rollback",
        "batch_started",
        "batch_finished",
        "dispatched",
      ]),
    );
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "rollout.rollback", targetId: rolloutId },
    });
    expect(audit.after).toMatchObject({ status: "rolling_back", note: "drill" });
    await expect(ops().rollout.pause({ id: rolloutId })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("was rolled back"),
    });
  });
});

describe("site time zones (rollout maintenance windows are in them)", () => {
  it("sets, returns and clears a site's IANA zone; refuses an unknown zone or a fixed offset naming the field", async () => {
    const owner = callerFor(db, await sessionOf(db, "alice@acme.example"), ORG);
    const site = await owner.site.create({ name: "ro-zone", timeZone: "America/New_York" });
    expect(site.timeZone).toBe("America/New_York");
    expect(await issuePaths(owner.site.create({ name: "ro-zone-2", timeZone: "Mars/Olympus" }))).toEqual([
      "timeZone",
    ]);
    expect(await issuePaths(owner.site.update({ id: site.id, timeZone: "+01:00" }))).toEqual(["timeZone"]);
    expect((await owner.site.update({ id: site.id, timeZone: null })).timeZone).toBeNull();
  });
});
