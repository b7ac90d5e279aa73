/** site.byId/create/update/delete/leafBundle: roles, tenancy, bad input, and the gateway call. */
import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { createCaller, createTRPCContext } from "../src";
import type { GatewayConnection } from "../src/gateway-client";
import { addMember, ORG } from "./actors";
import { callerFor, sessionOf } from "./callers";
import { type GatewayStandIn, startGatewayStandIn, UNAVAILABLE_SITE_ID } from "./gateway-stand-in";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let alice: ApiSession;
let bob: ApiSession;
let viewer: ApiSession;
let operator: ApiSession;

let standIn: GatewayStandIn;
let gateway: GatewayConnection;
const SECRET = "s".repeat(40);

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  alice = await sessionOf(db, "alice@acme.example");
  bob = await sessionOf(db, "bob@globex.example");
  viewer = await addMember(db, ORG, "viewer", "vic@acme.example");
  operator = await addMember(db, ORG, "operator", "otto@acme.example");
  standIn = await startGatewayStandIn(SECRET);
  gateway = standIn.connection;
});

afterAll(async () => {
  await standIn?.close();
  await testDb?.drop();
});

const withGateway = (session: ApiSession, connection: GatewayConnection | null, slug = ORG) =>
  createCaller(createTRPCContext({ db, session, activeOrganizationSlug: slug, gateway: connection }));

describe("site create / byId / update / delete", () => {
  it("creates a site (admin+), shows it with zero counts, and audits it", async () => {
    const site = await callerFor(db, alice, ORG).site.create({
      name: "depot-3",
      description: "  north depot ",
    });
    expect(site).toMatchObject({ name: "depot-3", description: "north depot", total: 0 });
    expect(await callerFor(db, viewer, ORG).site.byId({ id: site.id })).toEqual(site);
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: "site.create", targetId: site.id } });
    expect(audit.after).toMatchObject({ name: "depot-3" });
  });

  it("refuses an operator and a viewer (FORBIDDEN), bad names (BAD_REQUEST) and duplicates (CONFLICT)", async () => {
    await expect(callerFor(db, operator, ORG).site.create({ name: "x-1" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(callerFor(db, viewer, ORG).site.create({ name: "x-1" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    const owner = callerFor(db, alice, ORG);
    await expect(owner.site.create({ name: "bad name!" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(owner.site.create({ name: "" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(owner.site.create({ name: "plant-7" })).rejects.toMatchObject({
      code: "CONFLICT",
      message: 'a site named "plant-7" already exists',
    });
    expect(await db.site.count({ where: { name: "x-1" } })).toBe(0);
  });

  it("counts a site's nodes per status", async () => {
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    const plant = await db.site.findFirstOrThrow({ where: { organizationId: acme.id, name: "plant-7" } });
    const nodes = await db.node.groupBy({
      by: ["status"],
      where: { siteId: plant.id },
      _count: { _all: true },
    });
    const detail = await callerFor(db, alice, ORG).site.byId({ id: plant.id });
    expect(detail.total).toBe(nodes.reduce((sum, g) => sum + g._count._all, 0));
    for (const group of nodes) expect(detail.byStatus[group.status]).toBe(group._count._all);
    expect(detail.total).toBeGreaterThan(0);
  });

  it("answers NOT_FOUND for another organization's site, for every procedure", async () => {
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    const plant = await db.site.findFirstOrThrow({ where: { organizationId: acme.id, name: "plant-7" } });
    const globex = callerFor(db, bob, "globex");
    await expect(globex.site.byId({ id: plant.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(globex.site.update({ id: plant.id, name: "stolen" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(globex.site.delete({ id: plant.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(withGateway(bob, gateway, "globex").site.leafBundle({ id: plant.id })).rejects.toMatchObject(
      {
        code: "NOT_FOUND",
      },
    );
    expect(standIn.received.filter((r) => r.path.includes(plant.id))).toEqual([]);
    expect((await db.site.findUniqueOrThrow({ where: { id: plant.id } })).name).toBe("plant-7");
  });

  it("renames and clears the description, refusing a name in use", async () => {
    const owner = callerFor(db, alice, ORG);
    const site = await owner.site.create({ name: "yard-1", description: "old" });
    const renamed = await owner.site.update({ id: site.id, name: "yard-2", description: null });
    expect(renamed).toMatchObject({ name: "yard-2", description: null });
    await expect(owner.site.update({ id: site.id, name: "plant-7" })).rejects.toMatchObject({
      code: "CONFLICT",
    });
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: "site.update", targetId: site.id } });
    expect(audit.before).toMatchObject({ name: "yard-1", description: "old" });
    expect(audit.after).toMatchObject({ name: "yard-2", description: null });
  });

  it("deletes an empty site and refuses one with nodes (CONFLICT), keeping it and its nodes", async () => {
    const owner = callerFor(db, alice, ORG);
    const empty = await owner.site.create({ name: "temp-9" });
    const token = await owner.enrollment.createToken({ siteId: empty.id });
    await owner.site.delete({ id: empty.id });
    expect(await db.site.findUnique({ where: { id: empty.id } })).toBeNull();
    // Its tokens stay usable and place new nodes at no site.
    expect(await db.enrollmentToken.findUniqueOrThrow({ where: { id: token.id } })).toMatchObject({
      siteId: null,
      revokedAt: null,
    });

    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    const plant = await db.site.findFirstOrThrow({ where: { organizationId: acme.id, name: "plant-7" } });
    const before = await db.node.count({ where: { siteId: plant.id } });
    await expect(owner.site.delete({ id: plant.id })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining(`still has ${before} nodes`),
    });
    expect(await db.node.count({ where: { siteId: plant.id } })).toBe(before);
  });
});

describe("site.delete revokes the site's leaf credentials (issue 8, #2)", () => {
  it("marks its live credentials revoked in the same transaction, and no other site's", async () => {
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    const owner = callerFor(db, alice, ORG);
    const doomed = await owner.site.create({ name: "to-revoke" });
    const kept = await owner.site.create({ name: "kept-creds" });
    const inAYear = new Date(Date.now() + 365 * 86_400_000);
    for (const [site, key] of [
      [doomed.id, "UDOOMED"],
      [kept.id, "UKEPT"],
    ] as const) {
      await db.siteLeafCredential.create({
        data: { organizationId: acme.id, siteId: site, publicKey: key, expiresAt: inAYear },
      });
    }
    await owner.site.delete({ id: doomed.id });
    const rows = await db.siteLeafCredential.findMany({ where: { publicKey: { in: ["UDOOMED", "UKEPT"] } } });
    expect(Object.fromEntries(rows.map((row) => [row.publicKey, row.revokedAt !== null]))).toEqual({
      UDOOMED: true,
      UKEPT: false,
    });
  });
});

describe("site.leafBundle", () => {
  it("asks the gateway with the shared secret and returns every file and the run command", async () => {
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    const site = await callerFor(db, alice, ORG).site.create({ name: "leafy-1" });
    const bundle = await withGateway(alice, gateway).site.leafBundle({ id: site.id });
    expect(bundle).toEqual({
      siteId: site.id,
      siteName: "leafy-1",
      files: [
        { name: "leaf.conf", content: 'listen: "0.0.0.0:4222"\n', secret: false },
        { name: "site.creds", content: "-----BEGIN NATS USER JWT-----\nsecret\n", secret: true },
        // The leaf's system link (secret) and the public enrollment credentials (issue 8 #13).
        { name: "site-system.creds", content: "-----BEGIN NATS USER JWT-----\nsystem-link\n", secret: true },
        { name: "enroll.creds", content: "-----BEGIN NATS USER JWT-----\npublic\n", secret: false },
      ],
      runCommand: "nats-server -c /etc/edgefleet/leaf.conf",
      expiresAt: new Date("2027-02-23T00:00:00.000Z"),
    });
    expect(standIn.received.at(-1)).toEqual({
      method: "POST",
      path: `/internal/sites/${site.id}/leaf-bundle`,
      auth: `Bearer ${SECRET}`,
      body: {
        organizationId: acme.id,
        listen: "0.0.0.0:4222",
        credentialsPath: "/etc/edgefleet/site.creds",
        // The site artifact cache is on by default, as with the site-leaf CLI (issue 11).
        siteCache: { storeDir: "/var/lib/edgefleet/site-cache", maxBytes: 4 * 1024 ** 3 },
      },
    });
    // Audited, without the credentials.
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "site.leafBundle", targetId: site.id },
    });
    expect(JSON.stringify(audit)).not.toContain("secret");
    expect(JSON.stringify(audit)).not.toContain("system-link");
    expect(audit.after).toMatchObject({ minted: "site leaf credentials" });
  });

  it("passes the site cache's directory and size on, or asks for none", async () => {
    const site = await callerFor(db, alice, ORG).site.create({ name: "leafy-cache" });
    await withGateway(alice, gateway).site.leafBundle({
      id: site.id,
      siteCacheDir: "/srv/edgefleet/cache",
      siteCacheMaxMiB: 512,
    });
    expect(standIn.received.at(-1)?.body).toMatchObject({
      siteCache: { storeDir: "/srv/edgefleet/cache", maxBytes: 512 * 1024 * 1024 },
    });
    await withGateway(alice, gateway).site.leafBundle({ id: site.id, siteCache: false });
    expect(standIn.received.at(-1)?.body).toMatchObject({ siteCache: null });
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "site.leafBundle", targetId: site.id },
      orderBy: { createdAt: "asc" },
    });
    expect(audit.after).toMatchObject({ siteCache: { dir: "/srv/edgefleet/cache", maxMiB: 512 } });
  });

  it("refuses a cache smaller than 16 MiB or a relative directory, naming the field, asking nothing", async () => {
    const site = await callerFor(db, alice, ORG).site.create({ name: "leafy-bad-cache" });
    const before = standIn.received.length;
    await expect(
      withGateway(alice, gateway).site.leafBundle({ id: site.id, siteCacheMaxMiB: 8 }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("at least 16 MiB") });
    await expect(
      withGateway(alice, gateway).site.leafBundle({ id: site.id, siteCacheDir: "cache" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("siteCacheDir") });
    expect(standIn.received.length).toBe(before);
  });

  it("needs the admin role", async () => {
    const site = await callerFor(db, alice, ORG).site.create({ name: "leafy-2" });
    await expect(withGateway(operator, gateway).site.leafBundle({ id: site.id })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });

  it("says clearly when the gateway is not configured, unreachable, refuses or cannot", async () => {
    const site = await callerFor(db, alice, ORG).site.create({ name: "leafy-3" });
    await expect(withGateway(alice, null).site.leafBundle({ id: site.id })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining("GATEWAY_URL"),
    });
    await expect(
      withGateway(alice, { url: "http://127.0.0.1:9", internalToken: SECRET }).site.leafBundle({
        id: site.id,
      }),
    ).rejects.toMatchObject({ code: "SERVICE_UNAVAILABLE" });
    await expect(
      withGateway(alice, { ...gateway, internalToken: "wrong" }).site.leafBundle({ id: site.id }),
    ).rejects.toMatchObject({
      code: "INTERNAL_SERVER_ERROR",
      message: expect.stringContaining("wrong internal token"),
    });
    await expect(
      withGateway(alice, gateway).site.leafBundle({ id: site.id, listen: "anywhere" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await db.auditLog.count({ where: { action: "site.leafBundle", targetId: site.id } })).toBe(0);
  });

  it("maps the gateway's 503 to SERVICE_UNAVAILABLE with its reason", async () => {
    // A site id the stand-in answers 503 for.
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    await db.site.create({
      data: { id: UNAVAILABLE_SITE_ID, organizationId: acme.id, name: "leafy-503" },
    });
    await expect(
      withGateway(alice, gateway).site.leafBundle({ id: UNAVAILABLE_SITE_ID }),
    ).rejects.toMatchObject({
      code: "SERVICE_UNAVAILABLE",
      message: expect.stringContaining("NATS_LEAF_URL"),
    });
  });
});
