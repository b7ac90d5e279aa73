import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../src/client";
import { desiredDeltaSince } from "../src/desired-state";
import { syncUserFromIdentity } from "../src/identity";
import { seedDemoData } from "../src/seed";
import { tenantDb } from "../src/tenant";
import { createMigratedDatabase, type TestDatabase } from "./support/test-database";

const run = promisify(execFile);

let database: TestDatabase;
beforeAll(async () => {
  database = await createMigratedDatabase();
});
afterAll(async () => {
  await database?.drop();
});

async function tableCounts(db: Db) {
  return {
    organizations: await db.organization.count(),
    users: await db.user.count(),
    memberships: await db.membership.count(),
    sites: await db.site.count(),
    nodes: await db.node.count(),
    apps: await db.app.count(),
    appVersions: await db.appVersion.count(),
    appInstances: await db.appInstance.count(),
    rollouts: await db.rollout.count(),
  };
}

describe("db:seed", () => {
  it("loads the demo organizations through the CLI, and a second run changes no counts", async () => {
    const seedCli = () =>
      run("pnpm", ["--silent", "db:seed"], {
        cwd: join(import.meta.dirname, ".."),
        env: { ...process.env, DATABASE_URL: database.url },
      });
    await seedCli();
    const first = await tableCounts(database.db);
    expect(first).toMatchObject({ organizations: 2, users: 2, memberships: 2, sites: 5, nodes: 36 });
    expect(first.appInstances).toBeGreaterThan(0);
    await seedCli();
    await seedDemoData(database.db);
    expect(await tableCounts(database.db)).toEqual(first);
  });

  it("gives each organization recognisable nodes, sites, owners and a status mix", async () => {
    const db = database.db;
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: "acme" } });
    const globex = await db.organization.findUniqueOrThrow({ where: { slug: "globex" } });
    expect([acme.name, globex.name]).toEqual(["Acme Energy", "Globex Logistics"]);

    const acmeNodes = await tenantDb(db, acme.id).node.findMany({ include: { site: true } });
    expect(acmeNodes).toHaveLength(24);
    expect(acmeNodes.every((node) => node.name.startsWith(`acme-${node.site?.name}-`))).toBe(true);
    expect(new Set(acmeNodes.map((node) => node.site?.name))).toEqual(
      new Set(["plant-7", "plant-9", "depot-north"]),
    );
    expect(new Set(acmeNodes.map((node) => node.status))).toEqual(new Set(["online", "offline", "pending"]));
    expect(acmeNodes.find((node) => node.name === "acme-plant-7-01")?.labels).toEqual({
      site: "plant-7",
      tier: "canary",
      hw: "ipc-x86",
    });
    const globexNodes = await tenantDb(db, globex.id).node.findMany();
    expect(globexNodes).toHaveLength(12);
    expect(globexNodes.every((node) => node.name.startsWith("globex-"))).toBe(true);

    const alice = await db.user.findUniqueOrThrow({
      where: { email: "alice@acme.example" },
      include: { memberships: true },
    });
    expect(alice.keycloakSubject).toBeNull();
    expect(alice.memberships).toEqual([expect.objectContaining({ organizationId: acme.id, role: "owner" })]);
    const bob = await db.user.findUniqueOrThrow({
      where: { email: "bob@globex.example" },
      include: { memberships: true },
    });
    expect(bob.memberships).toEqual([expect.objectContaining({ organizationId: globex.id, role: "owner" })]);
  });

  it("gives demo nodes wire ids and desired apps with revisions, stable across re-seeding", async () => {
    const db = database.db;
    const node = await db.node.findFirstOrThrow({ where: { name: "acme-plant-7-01" } });
    const wireIds = await db.node.findMany({ select: { wireId: true } });
    expect(new Set(wireIds.map((row) => row.wireId)).size).toBe(36);
    expect(node.desiredRevision).toBeGreaterThan(0);
    const delta = await desiredDeltaSince(db, node.id, 0);
    expect(delta?.put.map((spec) => `${spec.app}@${spec.version}`)).toEqual([
      "modbus-bridge@2.0.1",
      "telemetry-collector@1.5.0",
    ]);
    await seedDemoData(db);
    const again = await db.node.findUniqueOrThrow({ where: { id: node.id } });
    expect(again.desiredRevision).toBe(node.desiredRevision);
  });

  it("does not unlink a user who already signed in", async () => {
    const db = database.db;
    const memberships = await syncUserFromIdentity(db, {
      subject: "kc-alice",
      email: "alice@acme.example",
      organizationSlugs: ["acme"],
    });
    expect(memberships.map((m) => [m.slug, m.role])).toEqual([["acme", "owner"]]);
    await seedDemoData(db);
    expect(
      (await db.user.findUniqueOrThrow({ where: { email: "alice@acme.example" } })).keycloakSubject,
    ).toBe("kc-alice");
  });
});
