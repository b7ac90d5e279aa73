/**
 * A rollout's per-site bandwidth budget over tRPC (issue 11, #4): zero or negative is refused
 * naming the field, another tenant's site is NOT_FOUND, nothing is created; a valid budget is
 * stored with the strategy (the gateway's controller and chunk service read it from there); while
 * such a rollout moves, a probe to the hub from one of the site's nodes is refused (issue 13, #3).
 */
import type { Db } from "@edgefleet/db";
import type { RolloutStrategyInput } from "@edgefleet/rollout";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZodError } from "zod";
import type { ApiSession } from "../src";
import { addMember, ORG, OTHER_ORG } from "./actors";
import { callerFor } from "./callers";
import { labelledNodes, readyApp } from "./rollout-fixtures";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let operator: ApiSession;
let app: Awaited<ReturnType<typeof readyApp>>;
let siteId: string;
let foreignSiteId: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  operator = await addMember(db, ORG, "operator", "bw@acme.example");
  const acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: ORG } })).id;
  const globexId = (await db.organization.findUniqueOrThrow({ where: { slug: OTHER_ORG } })).id;
  app = await readyApp(db, acmeId, "bw-app", ["1.0.0", "2.0.0"]);
  siteId = (await db.site.create({ data: { organizationId: acmeId, name: "bw-site" } })).id;
  foreignSiteId = (await db.site.create({ data: { organizationId: globexId, name: "bw-foreign" } })).id;
  await labelledNodes(db, acmeId, "bw", 3, { fleet: "bw" }, { siteId });
});

afterAll(async () => {
  await testDb?.drop();
});

const ops = () => callerFor(db, operator, ORG);
const input = (siteBandwidth: RolloutStrategyInput["siteBandwidth"]) => ({
  appVersionId: app.versions["2.0.0"] as string,
  target: { selector: "fleet=bw" },
  strategy: { batches: [{ percent: 100 }], siteBandwidth },
});

async function issuePaths(call: Promise<unknown>): Promise<string[]> {
  try {
    await call;
  } catch (error) {
    if (error instanceof TRPCError && error.cause instanceof ZodError)
      return error.cause.issues.map((issue) => issue.path.join("."));
    throw error;
  }
  throw new Error("the call was not refused");
}

describe("siteBandwidth", () => {
  it("zero or negative budgets: 400 naming the field, nothing created", async () => {
    // biome-ignore lint/suspicious/noExplicitAny: deliberately bad input past the client's types
    const create = (siteBandwidth: unknown) => ops().rollout.create(input(siteBandwidth as any));
    expect(await issuePaths(create({ bytesPerSecond: 0 }))).toEqual([
      "strategy.siteBandwidth.bytesPerSecond",
    ]);
    expect(await issuePaths(create({ concurrentDownloads: -2 }))).toEqual([
      "strategy.siteBandwidth.concurrentDownloads",
    ]);
    expect(await issuePaths(create({ sites: { [siteId]: { bytesPerSecond: -1 } } }))).toEqual([
      `strategy.siteBandwidth.sites.${siteId}.bytesPerSecond`,
    ]);
    await expect(create({ sites: { [foreignSiteId]: { bytesPerSecond: 1000 } } })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect(await db.rollout.count({ where: { appId: app.appId } })).toBe(0);
  });

  it("a valid budget is stored with the strategy", async () => {
    const created = await ops().rollout.create(
      input({ bytesPerSecond: 2_000_000, sites: { [siteId]: { concurrentDownloads: 2 } } }),
    );
    const row = await db.rollout.findUniqueOrThrow({ where: { id: created.id } });
    expect((row.strategy as { siteBandwidth?: unknown }).siteBandwidth).toEqual({
      bytesPerSecond: 2_000_000,
      sites: { [siteId]: { concurrentDownloads: 2 } },
    });
  });
});

describe("network probes against a budgeted uplink", () => {
  it("a hub probe from a node of the site is refused while the rollout moves, naming it; a leaf probe is not", async () => {
    await db.rollout.deleteMany({ where: { appId: app.appId } });
    const created = await ops().rollout.create(input({ bytesPerSecond: 1_000_000 }));
    const node = await db.node.findFirstOrThrow({ where: { siteId, name: { startsWith: "bw" } } });
    // Pending: nothing moves yet, so the budget does not hold the uplink.
    await expect(ops().node.probe({ id: node.id, target: "hub" })).rejects.not.toThrow(/budgeted/);
    await ops().rollout.start({ id: created.id });
    expect((await db.rollout.findUniqueOrThrow({ where: { id: created.id } })).status).toBe("running");
    await expect(ops().node.probe({ id: node.id, target: "hub" })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining(`budgeted to rollout ${created.id}`),
    });
    await expect(ops().node.probe({ id: node.id, target: "leaf" })).rejects.not.toThrow(/budgeted/);
    expect(await db.networkProbe.count({ where: { nodeId: node.id, target: "hub" } })).toBe(0);
    await ops().rollout.abort({ id: created.id });
  });
});
