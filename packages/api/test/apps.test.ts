/** Apps and versions: roles, tenancy, bad input, immutability, delete rules, audit, deployment counts. */
import { type Db, setDesiredApps, setDesiredAppsForNodes } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { type ApiSession, appRouter } from "../src";
import { addMember, ORG } from "./actors";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let bob: ApiSession;
let viewer: ApiSession;
let operator: ApiSession;
let acmeId: string;

const SHA = "a".repeat(64);
const runSpec = { command: ["./telemetry", "--port", "9100"], restart: "always" as const };

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  bob = await sessionOf(db, "bob@globex.example");
  viewer = await addMember(db, ORG, "viewer", "vic@acme.example");
  operator = await addMember(db, ORG, "operator", "otto@acme.example");
  acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: ORG } })).id;
});

afterAll(async () => {
  await testDb?.drop();
});

/** The zod issue paths of a refused input, joined with dots. */
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

describe("apps", () => {
  it("creates (operator+), reads (viewer), renames and audits an app", async () => {
    const ops = callerFor(db, operator, ORG);
    const app = await ops.app.create({ name: "vision-gateway", description: "camera pipeline" });
    expect(app).toMatchObject({ name: "vision-gateway", versions: 0, instances: 0 });
    expect(await callerFor(db, viewer, ORG).app.byId({ id: app.id })).toEqual(app);
    expect((await callerFor(db, viewer, ORG).app.list()).map((a) => a.name)).toContain("vision-gateway");
    const renamed = await ops.app.update({ id: app.id, name: "vision", description: null });
    expect(renamed).toMatchObject({ name: "vision", description: null });
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: "app.update", targetId: app.id } });
    expect(audit).toMatchObject({
      actorType: "user",
      before: { name: "vision-gateway" },
      after: { name: "vision" },
    });
    expect(await db.auditLog.count({ where: { action: "app.create", targetId: app.id } })).toBe(1);
  });

  it("refuses a viewer (FORBIDDEN), bad names (BAD_REQUEST naming the field) and duplicates (CONFLICT)", async () => {
    await expect(callerFor(db, viewer, ORG).app.create({ name: "nope" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    expect(await issuePaths(callerFor(db, operator, ORG).app.create({ name: "Has Spaces/.." }))).toEqual([
      "name",
    ]);
    await expect(
      callerFor(db, operator, ORG).app.create({ name: "telemetry-collector" }),
    ).rejects.toMatchObject({
      code: "CONFLICT",
    });
  });

  it("answers NOT_FOUND for another organization's app, whatever the call, and changes nothing", async () => {
    const acmeApp = await db.app.findFirstOrThrow({ where: { organizationId: acmeId } });
    const globex = callerFor(db, bob, "globex");
    const calls: Array<() => Promise<unknown>> = [
      () => globex.app.byId({ id: acmeApp.id }),
      () => globex.app.deployment({ id: acmeApp.id }),
      () => globex.app.update({ id: acmeApp.id, description: "mine now" }),
      () => globex.app.delete({ id: acmeApp.id }),
      () => globex.appVersion.list({ appId: acmeApp.id }),
      () =>
        globex.appVersion.create({
          appId: acmeApp.id,
          version: "9.9.9",
          runSpec,
          artifact: { source: "upload" },
        }),
    ];
    for (const call of calls) await expect(call()).rejects.toMatchObject({ code: "NOT_FOUND" });
    const acmeVersion = await db.appVersion.findFirstOrThrow({ where: { appId: acmeApp.id } });
    await expect(globex.appVersion.byId({ appId: acmeApp.id, id: acmeVersion.id })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(globex.appVersion.delete({ appId: acmeApp.id, id: acmeVersion.id })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    // A version id under the wrong app of the right organization: not found either.
    const other = await callerFor(db, operator, ORG).app.create({ name: "empty-app" });
    await expect(
      callerFor(db, operator, ORG).appVersion.byId({ appId: other.id, id: acmeVersion.id }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await db.app.findUniqueOrThrow({ where: { id: acmeApp.id } })).toEqual(acmeApp);
    expect(await db.appVersion.count({ where: { version: "9.9.9" } })).toBe(0);
  });

  it("refuses to rename or delete an app nodes have (CONFLICT), and deletes one they do not", async () => {
    const ops = callerFor(db, operator, ORG);
    const deployed = await db.app.findFirstOrThrow({
      where: { organizationId: acmeId, name: "telemetry-collector" },
    });
    await expect(ops.app.update({ id: deployed.id, name: "telemetry" })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("remove it from them before renaming"),
    });
    await expect(ops.app.delete({ id: deployed.id })).rejects.toMatchObject({ code: "CONFLICT" });
    // A description change is fine while deployed.
    await expect(
      ops.app.update({ id: deployed.id, description: "collects telemetry" }),
    ).resolves.toMatchObject({
      description: "collects telemetry",
    });
    const spare = await ops.app.create({ name: "spare" });
    await ops.appVersion.create({
      appId: spare.id,
      version: "1.0.0",
      runSpec,
      artifact: { source: "upload" },
    });
    expect(await ops.app.delete({ id: spare.id })).toMatchObject({ name: "spare", versions: 1 });
    expect(await db.appVersion.count({ where: { appId: spare.id } })).toBe(0);
  });
});

describe("app versions", () => {
  it("creates url and upload versions pending, with the run spec and the declared hash", async () => {
    const ops = callerFor(db, operator, ORG);
    const app = await ops.app.create({ name: "edge-proxy" });
    const fromUrl = await ops.appVersion.create({
      appId: app.id,
      version: "1.4.2",
      runSpec,
      artifact: { source: "url", url: "https://downloads.example.com/edge-proxy-1.4.2.tar.gz", sha256: SHA },
    });
    expect(fromUrl).toMatchObject({
      version: "1.4.2",
      runSpec,
      artifact: {
        source: "url",
        url: "https://downloads.example.com/edge-proxy-1.4.2.tar.gz",
        sha256: SHA,
        state: "pending",
        size: null,
      },
    });
    const uploaded = await ops.appVersion.create({
      appId: app.id,
      version: "1.5.0-rc.1",
      runSpec,
      artifact: { source: "upload" },
    });
    expect(uploaded.artifact).toEqual({
      source: "upload",
      url: null,
      sha256: null,
      size: null,
      state: "pending",
      error: null,
    });
    expect(uploaded.createdBy).toBe(operator.userId);
    const page = await callerFor(db, viewer, ORG).appVersion.list({ appId: app.id, limit: 1 });
    expect(page.items.map((v) => v.version)).toEqual(["1.5.0-rc.1"]);
    const next = await callerFor(db, viewer, ORG).appVersion.list({
      appId: app.id,
      limit: 1,
      cursor: page.nextCursor ?? undefined,
    });
    expect(next).toMatchObject({ items: [{ version: "1.4.2" }], nextCursor: null });
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "appVersion.create", targetId: fromUrl.id },
    });
    expect(audit.after).toMatchObject({ version: "1.4.2", artifact: { state: "pending" } });
  });

  it("refuses bad input naming the field, and a second version with the same label", async () => {
    const ops = callerFor(db, operator, ORG);
    const app = await ops.app.create({ name: "bad-input" });
    const base = { appId: app.id, version: "1.0.0", runSpec, artifact: { source: "upload" as const } };
    expect(await issuePaths(ops.appVersion.create({ ...base, version: "../1" }))).toEqual(["version"]);
    expect(await issuePaths(ops.appVersion.create({ ...base, runSpec: { command: [] } }))).toEqual([
      "runSpec.command",
    ]);
    expect(
      await issuePaths(
        ops.appVersion.create({ ...base, artifact: { source: "url", url: "http://plain.example/a" } }),
      ),
    ).toEqual(["artifact.url"]);
    expect(
      await issuePaths(
        ops.appVersion.create({ ...base, artifact: { source: "url", url: "https://u:p@x.example/a" } }),
      ),
    ).toEqual(["artifact.url"]);
    expect(
      await issuePaths(ops.appVersion.create({ ...base, artifact: { source: "upload", sha256: "ABC" } })),
    ).toEqual(["artifact.sha256"]);
    await ops.appVersion.create(base);
    await expect(ops.appVersion.create(base)).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("versions are immutable"),
    });
    expect(await db.appVersion.count({ where: { appId: app.id } })).toBe(1);
  });

  it("is immutable: the API has no way to change a version", () => {
    const procedures = Object.keys(appRouter._def.procedures).filter((path) =>
      path.startsWith("appVersion."),
    );
    expect(procedures.sort()).toEqual([
      "appVersion.byId",
      "appVersion.create",
      "appVersion.delete",
      "appVersion.list",
      "appVersion.uploadTarget",
    ]);
  });

  it("refuses to delete a version nodes desire or run (CONFLICT), then deletes it once they moved", async () => {
    const ops = callerFor(db, operator, ORG);
    const app = await ops.app.create({ name: "rotating" });
    const v1 = await ops.appVersion.create({
      appId: app.id,
      version: "1",
      runSpec,
      artifact: { source: "upload" },
    });
    const v2 = await ops.appVersion.create({
      appId: app.id,
      version: "2",
      runSpec,
      artifact: { source: "upload" },
    });
    const node = await db.node.findFirstOrThrow({ where: { organizationId: acmeId } });
    await setDesiredApps(db, acmeId, node.id, { put: [v1.id] });
    await expect(ops.appVersion.delete({ appId: app.id, id: v1.id })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("1 node is told to run it"),
    });
    // The node moves to v2 but still reports running v1: still refused.
    await setDesiredApps(db, acmeId, node.id, { put: [v2.id] });
    await db.appInstance.updateMany({
      where: { nodeId: node.id, appId: app.id },
      data: { observedVersionId: v1.id },
    });
    await expect(ops.appVersion.delete({ appId: app.id, id: v1.id })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("1 node runs it"),
    });
    await db.appInstance.updateMany({
      where: { nodeId: node.id, appId: app.id },
      data: { observedVersionId: v2.id },
    });
    expect(await ops.appVersion.delete({ appId: app.id, id: v1.id })).toMatchObject({ id: v1.id });
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "appVersion.delete", targetId: v1.id },
    });
    expect(audit).toMatchObject({ after: null, before: { version: "1" } });
    await setDesiredApps(db, acmeId, node.id, { del: [app.id] });
  });

  it("says where each version runs, counting instances by desired and observed version and state", async () => {
    const ops = callerFor(db, operator, ORG);
    const app = await ops.app.create({ name: "counted" });
    const v1 = await ops.appVersion.create({
      appId: app.id,
      version: "1",
      runSpec,
      artifact: { source: "upload" },
    });
    const v2 = await ops.appVersion.create({
      appId: app.id,
      version: "2",
      runSpec,
      artifact: { source: "upload" },
    });
    const nodes = await db.node.findMany({
      where: { organizationId: acmeId },
      take: 10,
      orderBy: { name: "asc" },
    });
    const ids = nodes.map((n) => n.id);
    await setDesiredAppsForNodes(db, acmeId, ids, { put: [v1.id] });
    // 6 nodes run v1; then 4 of the 10 are moved to v2: 2 already run it, 1 pulls, 1 failed.
    await db.appInstance.updateMany({
      where: { appId: app.id, nodeId: { in: ids.slice(0, 6) } },
      data: { state: "running", observedVersionId: v1.id },
    });
    await setDesiredAppsForNodes(db, acmeId, ids.slice(6), { put: [v2.id] });
    await db.appInstance.updateMany({
      where: { appId: app.id, nodeId: { in: ids.slice(6, 8) } },
      data: { state: "running", observedVersionId: v2.id },
    });
    await db.appInstance.updateMany({ where: { appId: app.id, nodeId: ids[8] }, data: { state: "pulling" } });
    await db.appInstance.updateMany({
      where: { appId: app.id, nodeId: ids[9] },
      data: { state: "failed", observedVersionId: v1.id },
    });

    const deployment = await callerFor(db, viewer, ORG).app.deployment({ id: app.id });
    expect(deployment.instances).toBe(10);
    const byVersion = Object.fromEntries(deployment.versions.map((v) => [v.version, v]));
    expect(byVersion["1"]?.desired).toMatchObject({ total: 6, byState: { running: 6 } });
    expect(byVersion["1"]?.observed).toMatchObject({ total: 7, byState: { running: 6, failed: 1 } });
    expect(byVersion["2"]?.desired).toMatchObject({
      total: 4,
      byState: { running: 2, pulling: 1, failed: 1 },
    });
    expect(byVersion["2"]?.observed).toMatchObject({ total: 2, byState: { running: 2 } });
    expect(deployment.rows.reduce((sum, row) => sum + row.count, 0)).toBe(10);
    expect((await callerFor(db, viewer, ORG).app.byId({ id: app.id })).byState).toMatchObject({
      running: 8,
      pulling: 1,
      failed: 1,
    });
    await setDesiredAppsForNodes(db, acmeId, ids, { del: [app.id] });
  });
});
