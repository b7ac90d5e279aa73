import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../src/client";
import type { Prisma } from "../src/generated/prisma/client";
import { TENANT_OWNED_MODELS, TenantScopeError, tenantDb } from "../src/tenant";
import { createMigratedDatabase, type TestDatabase } from "./support/test-database";

let database: TestDatabase;
let a: Awaited<ReturnType<typeof createTenant>>;
let b: Awaited<ReturnType<typeof createTenant>>;

/** A tenant with one row in every tenant-owned table, created through the unscoped client. */
async function createTenant(db: Db, slug: string) {
  const organization = await db.organization.create({ data: { slug, name: `Org ${slug}` } });
  const organizationId = organization.id;
  const user = await db.user.create({ data: { email: `owner@${slug}.example`, name: `${slug} owner` } });
  await db.membership.create({ data: { organizationId, userId: user.id, role: "owner" } });
  const site = await db.site.create({ data: { organizationId, name: "site-1" } });
  const node = await db.node.create({
    data: {
      organizationId,
      name: `${slug}-node-1`,
      siteId: site.id,
      labels: { tier: "canary" },
      status: "online",
    },
  });
  const app = await db.app.create({ data: { organizationId, name: "app-1" } });
  const version = await db.appVersion.create({
    data: { organizationId, appId: app.id, version: "1.0.0", artifactUrl: "https://example.test/a" },
  });
  const instance = await db.appInstance.create({
    data: { organizationId, nodeId: node.id, appId: app.id, desiredVersionId: version.id },
  });
  const rollout = await db.rollout.create({
    data: { organizationId, appId: app.id, appVersionId: version.id, selector: "tier=canary" },
  });
  const token = await db.enrollmentToken.create({
    data: { organizationId, tokenHash: `hash-${slug}`, expiresAt: new Date(Date.now() + 3_600_000) },
  });
  const apiKey = await db.apiKey.create({
    data: { organizationId, name: "ci", prefix: "efk_1234", hash: `key-${slug}`, role: "operator" },
  });
  const audit = await db.auditLog.create({
    data: {
      organizationId,
      actorType: "system",
      action: "test.created",
      targetType: "node",
      targetId: node.id,
    },
  });
  const policy = await db.alertPolicy.create({
    data: {
      organizationId,
      name: "node down",
      kind: "node_offline",
      spec: { kind: "node_offline", forMinutes: 5 },
      siteId: site.id,
      severity: "critical",
    },
  });
  const channel = await db.alertChannel.create({
    data: { organizationId, name: "ops", kind: "email", target: `ops@${slug}.example` },
  });
  const pushChannel = await db.alertChannel.create({
    data: { organizationId, name: `push ${slug}`, kind: "webpush", target: "device", userId: user.id },
  });
  const pushSubscription = await db.pushSubscription.create({
    data: {
      organizationId,
      userId: user.id,
      channelId: pushChannel.id,
      endpoint: `https://push.example/${slug}`,
      p256dh: "key",
      auth: "auth",
    },
  });
  return {
    organization,
    user,
    pushSubscription,
    site,
    node,
    app,
    version,
    instance,
    rollout,
    token,
    apiKey,
    audit,
    policy,
    channel,
  };
}

beforeAll(async () => {
  database = await createMigratedDatabase();
  a = await createTenant(database.db, "tenant-a");
  b = await createTenant(database.db, "tenant-b");
});
afterAll(async () => {
  await database?.drop();
});

const scoped = () => tenantDb(database.db, a.organization.id);

describe("tenantDb reads", () => {
  it("knows every model that carries organizationId", () => {
    expect([...TENANT_OWNED_MODELS].sort()).toEqual(
      [
        "AlertChannel",
        "AlertDelivery",
        "AlertNotification",
        "AlertPolicy",
        "AlertingState",
        "ApiKey",
        "App",
        "AppInstance",
        "AppVersion",
        "AuditLog",
        "DesiredAppRemoval",
        "EnrollmentToken",
        "Membership",
        "NetworkProbe",
        "Node",
        "NodeStatusEvent",
        "PushActionUse",
        "PushSubscription",
        "Rollout",
        "RolloutEvent",
        "RolloutGateVerdict",
        "RolloutNode",
        "RolloutSiteUplink",
        "Site",
        "SiteLeafCredential",
      ].sort(),
    );
  });

  it("cannot find another tenant's rows by id, in any tenant-owned model", async () => {
    const tdb = scoped();
    expect(await tdb.node.findUnique({ where: { id: b.node.id } })).toBeNull();
    expect(await tdb.site.findUnique({ where: { id: b.site.id } })).toBeNull();
    expect(await tdb.app.findUnique({ where: { id: b.app.id } })).toBeNull();
    expect(await tdb.appVersion.findUnique({ where: { id: b.version.id } })).toBeNull();
    expect(await tdb.appInstance.findUnique({ where: { id: b.instance.id } })).toBeNull();
    expect(await tdb.rollout.findFirst({ where: { id: b.rollout.id } })).toBeNull();
    expect(await tdb.enrollmentToken.findUnique({ where: { tokenHash: b.token.tokenHash } })).toBeNull();
    expect(await tdb.apiKey.findUnique({ where: { hash: b.apiKey.hash } })).toBeNull();
    expect(await tdb.auditLog.findUnique({ where: { id: b.audit.id } })).toBeNull();
    expect(await tdb.alertPolicy.findUnique({ where: { id: b.policy.id } })).toBeNull();
    expect(await tdb.alertChannel.findUnique({ where: { id: b.channel.id } })).toBeNull();
    expect(await tdb.pushSubscription.findUnique({ where: { id: b.pushSubscription.id } })).toBeNull();
    await expect(tdb.node.findUniqueOrThrow({ where: { id: b.node.id } })).rejects.toThrow();
    // ...while its own rows are found
    expect((await tdb.node.findUnique({ where: { id: a.node.id } }))?.name).toBe("tenant-a-node-1");
  });

  it("lists, counts, aggregates and groups only its own rows", async () => {
    const tdb = scoped();
    expect((await tdb.node.findMany()).map((node) => node.name)).toEqual(["tenant-a-node-1"]);
    expect(await tdb.node.findMany({ where: { name: { startsWith: "tenant-b" } } })).toEqual([]);
    expect(await tdb.node.count()).toBe(1);
    expect(await tdb.membership.count()).toBe(1);
    const aggregate = await tdb.node.aggregate({ _count: { _all: true }, _max: { name: true } });
    expect(aggregate).toMatchObject({ _count: { _all: 1 }, _max: { name: "tenant-a-node-1" } });
    const byStatus = await tdb.node.groupBy({ by: ["status"], _count: { _all: true } });
    expect(byStatus).toEqual([{ status: "online", _count: { _all: 1 } }]);
    // OR inside the filter cannot widen the tenant condition
    const either = await tdb.node.findMany({ where: { OR: [{ id: a.node.id }, { id: b.node.id }] } });
    expect(either.map((node) => node.id)).toEqual([a.node.id]);
  });

  it("rejects a where naming another organization", async () => {
    const tdb = scoped();
    await expect(tdb.node.findMany({ where: { organizationId: b.organization.id } })).rejects.toThrow(
      TenantScopeError,
    );
    await expect(
      tdb.node.findUnique({
        where: { organizationId_name: { organizationId: b.organization.id, name: "tenant-b-node-1" } },
      }),
    ).rejects.toThrow(TenantScopeError);
    // naming its own organization is fine
    expect(await tdb.node.count({ where: { organizationId: a.organization.id } })).toBe(1);
  });

  it("relation reads stay in the tenant, and a user's other memberships are hidden", async () => {
    const tdb = scoped();
    // make tenant-a's owner also a member of tenant-b
    await database.db.membership.create({
      data: { organizationId: b.organization.id, userId: a.user.id, role: "viewer" },
    });
    const membership = await tdb.membership.findFirstOrThrow({
      include: { user: { include: { memberships: true, _count: { select: { memberships: true } } } } },
    });
    expect(membership.user.memberships.map((m) => m.organizationId)).toEqual([a.organization.id]);
    expect(membership.user._count.memberships).toBe(1);
    const users = await tdb.user.findMany({ include: { memberships: true } });
    expect(users.map((user) => user.email)).toEqual(["owner@tenant-a.example"]);
    expect(users[0]?.memberships.map((m) => m.organizationId)).toEqual([a.organization.id]);
  });

  it("sees only members among users, and only its own organization", async () => {
    const tdb = scoped();
    expect(await tdb.user.findUnique({ where: { email: b.user.email } })).toBeNull();
    expect(await tdb.user.findUnique({ where: { id: a.user.id } })).not.toBeNull();
    expect(await tdb.organization.findUnique({ where: { slug: "tenant-b" } })).toBeNull();
    expect((await tdb.organization.findMany()).map((o) => o.slug)).toEqual(["tenant-a"]);
    await expect(tdb.organization.findUnique({ where: { id: b.organization.id } })).rejects.toThrow(
      TenantScopeError,
    );
  });

  it("keeps the scope inside interactive and batch transactions", async () => {
    const tdb = scoped();
    const [inside, count] = await tdb.$transaction(async (tx) => [
      await tx.node.findUnique({ where: { id: b.node.id } }),
      await tx.node.count(),
    ]);
    expect(inside).toBeNull();
    expect(count).toBe(1);
    const batch = await tdb.$transaction([
      tdb.node.findUnique({ where: { id: b.node.id } }),
      tdb.site.count(),
    ]);
    expect(batch).toEqual([null, 1]);
  });
});

describe("tenantDb writes", () => {
  it("cannot update or delete another tenant's rows", async () => {
    const tdb = scoped();
    await expect(
      tdb.node.update({ where: { id: b.node.id }, data: { agentVersion: "hacked" } }),
    ).rejects.toMatchObject({
      code: "P2025",
    });
    expect(await tdb.node.updateMany({ where: { id: b.node.id }, data: { agentVersion: "hacked" } })).toEqual(
      {
        count: 0,
      },
    );
    await expect(tdb.site.delete({ where: { id: b.site.id } })).rejects.toMatchObject({ code: "P2025" });
    expect(await tdb.auditLog.deleteMany({ where: { id: b.audit.id } })).toEqual({ count: 0 });
    await tdb.auditLog.deleteMany(); // deletes tenant-a's audit rows only

    const untouched = await database.db.node.findUniqueOrThrow({ where: { id: b.node.id } });
    expect(untouched.agentVersion).toBeNull();
    expect(await database.db.site.count({ where: { id: b.site.id } })).toBe(1);
    expect(await database.db.auditLog.count({ where: { organizationId: b.organization.id } })).toBe(1);
    expect(await database.db.auditLog.count({ where: { organizationId: a.organization.id } })).toBe(0);
  });

  it("creates rows in its own organization", async () => {
    const tdb = scoped();
    const data = { name: "site-created" } as Prisma.SiteUncheckedCreateInput; // organizationId left out
    const site = await tdb.site.create({ data });
    expect(site.organizationId).toBe(a.organization.id);
    const many = await tdb.site.createManyAndReturn({
      data: [{ name: "site-m1" }, { name: "site-m2" }] as Prisma.SiteCreateManyInput[],
    });
    expect(many.map((row) => row.organizationId)).toEqual([a.organization.id, a.organization.id]);
  });

  it("upsert never touches another tenant's row", async () => {
    const tdb = scoped();
    const row = await tdb.site.upsert({
      where: { id: b.site.id },
      create: { organizationId: a.organization.id, name: "site-upserted" },
      update: { description: "hacked" },
    });
    expect(row).toMatchObject({ organizationId: a.organization.id, name: "site-upserted" });
    expect((await database.db.site.findUniqueOrThrow({ where: { id: b.site.id } })).description).toBeNull();
  });

  it("rejects data naming another organization, or moving a row to one", async () => {
    const tdb = scoped();
    await expect(tdb.site.create({ data: { organizationId: b.organization.id, name: "x" } })).rejects.toThrow(
      TenantScopeError,
    );
    await expect(
      tdb.node.update({ where: { id: a.node.id }, data: { organizationId: b.organization.id } }),
    ).rejects.toThrow(TenantScopeError);
    await expect(
      tdb.site.createMany({
        data: [
          { organizationId: a.organization.id, name: "ok" },
          { organizationId: b.organization.id, name: "no" },
        ],
      }),
    ).rejects.toThrow(TenantScopeError);
  });

  it("rejects nested relation writes, and the database rejects foreign keys into another tenant", async () => {
    const tdb = scoped();
    await expect(
      tdb.node.update({ where: { id: a.node.id }, data: { site: { connect: { id: b.site.id } } } }),
    ).rejects.toThrow(/scalar fields only/);
    // scalar foreign keys are composite (organization_id, fk), so Postgres refuses a cross-tenant pointer
    await expect(
      tdb.node.update({ where: { id: a.node.id }, data: { siteId: b.site.id } }),
    ).rejects.toMatchObject({
      code: "P2003",
    });
    await expect(
      tdb.appInstance.create({
        data: {
          organizationId: a.organization.id,
          nodeId: b.node.id,
          appId: a.app.id,
          desiredVersionId: a.version.id,
        },
      }),
    ).rejects.toMatchObject({ code: "P2003" });
    // a version of another app of the same tenant is refused too
    const otherApp = await tdb.app.create({ data: { organizationId: a.organization.id, name: "app-2" } });
    const otherVersion = await tdb.appVersion.create({
      data: {
        organizationId: a.organization.id,
        appId: otherApp.id,
        version: "9.9.9",
        artifactUrl: "https://x.test",
      },
    });
    await expect(
      tdb.appInstance.update({ where: { id: a.instance.id }, data: { desiredVersionId: otherVersion.id } }),
    ).rejects.toMatchObject({ code: "P2003" });
  });

  it("limits organization writes to renaming its own organization", async () => {
    const tdb = scoped();
    await expect(
      tdb.organization.update({ where: { slug: "tenant-b" }, data: { name: "hacked" } }),
    ).rejects.toMatchObject({
      code: "P2025",
    });
    await expect(
      tdb.organization.update({ where: { id: a.organization.id }, data: { slug: "new" } }),
    ).rejects.toThrow(TenantScopeError);
    await expect(tdb.organization.create({ data: { slug: "new", name: "new" } })).rejects.toThrow(
      TenantScopeError,
    );
    await expect(tdb.organization.delete({ where: { id: a.organization.id } })).rejects.toThrow(
      TenantScopeError,
    );
    await expect(tdb.user.update({ where: { id: a.user.id }, data: { name: "x" } })).rejects.toThrow(
      TenantScopeError,
    );
    const renamed = await tdb.organization.update({
      where: { id: a.organization.id },
      data: { name: "Renamed" },
    });
    expect(renamed.name).toBe("Renamed");
    expect((await database.db.organization.findUniqueOrThrow({ where: { slug: "tenant-b" } })).name).toBe(
      "Org tenant-b",
    );
  });

  it("refuses raw SQL and malformed organization ids", async () => {
    const tdb = scoped();
    await expect(tdb.$queryRaw`SELECT * FROM node`).rejects.toThrow(TenantScopeError);
    await expect(tdb.$executeRawUnsafe("DELETE FROM node")).rejects.toThrow(TenantScopeError);
    expect(await database.db.node.count()).toBe(2);
    expect(() => tenantDb(database.db, "tenant-a")).toThrow(TenantScopeError);
    expect(() => tenantDb(database.db, "")).toThrow(TenantScopeError);
  });
});
