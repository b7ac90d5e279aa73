import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../src/client";
import { demoArtifact } from "../src/demo-artifacts";
import { desiredDeltaSince, setDesiredApps } from "../src/desired-state";
import { syncUserFromIdentity } from "../src/identity";
import { DEMO_ORGANIZATIONS, demoNodes, seedDemoData } from "../src/seed";
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
  }, 120_000);

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

  it("seeds upload versions that wait for the demo artifacts' exact bytes, and no rollout", async () => {
    const db = database.db;
    const versions = await db.appVersion.findMany({ include: { app: true, organization: true } });
    expect(versions.map((v) => `${v.organization.slug}/${v.app.name}@${v.version}`).sort()).toEqual([
      "acme/modbus-bridge@2.0.1",
      "acme/telemetry-collector@1.4.0",
      "acme/telemetry-collector@1.5.0",
      "globex/route-optimizer@0.9.0",
      "globex/route-optimizer@1.0.0",
    ]);
    for (const version of versions) {
      expect(version).toMatchObject({
        artifactSource: "upload",
        artifactUrl: null,
        artifactState: "pending",
        artifactSha256: demoArtifact(version.organization.slug, version.app.name, version.version).sha256,
        runSpec: { command: ["./artifact"] },
      });
    }
    // Rollouts are the demo loader's (live fleet), made through the rollout store, never seeded.
    expect(await db.rollout.count()).toBe(0);
    // The artifact is a script a real agent runs, and differs per version.
    const artifact = demoArtifact("acme", "telemetry-collector", "1.5.0");
    expect(artifact.bytes.subarray(0, 10).toString()).toBe("#!/bin/sh\n");
    expect(artifact.sha256).not.toBe(demoArtifact("acme", "telemetry-collector", "1.4.0").sha256);
  });

  it("never undoes a later change of a node's desired apps (a rollout's) when seeding again", async () => {
    const db = database.db;
    const node = await db.node.findFirstOrThrow({ where: { name: "acme-plant-7-05" } });
    const v150 = await db.appVersion.findFirstOrThrow({
      where: { organizationId: node.organizationId, app: { name: "telemetry-collector" }, version: "1.5.0" },
    });
    await setDesiredApps(db, node.organizationId, node.id, { put: [v150.id] });
    const revision = (await db.node.findUniqueOrThrow({ where: { id: node.id } })).desiredRevision;
    await seedDemoData(db);
    const instance = await db.appInstance.findFirstOrThrow({ where: { nodeId: node.id, appId: v150.appId } });
    expect(instance.desiredVersionId).toBe(v150.id);
    expect((await db.node.findUniqueOrThrow({ where: { id: node.id } })).desiredRevision).toBe(revision);
  });

  it("replaces the example-URL apps and the written-in rollout of databases seeded before the demo was live", async () => {
    const db = database.db;
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: "acme" } });
    const app = await db.app.findFirstOrThrow({ where: { organizationId: acme.id, name: "modbus-bridge" } });
    const legacy = await db.appVersion.create({
      data: {
        organizationId: acme.id,
        appId: app.id,
        version: "1.9.0",
        artifactUrl: "https://artifacts.edgefleet.example/acme/modbus-bridge/1.9.0.tar.gz",
      },
    });
    await db.rollout.create({
      data: {
        organizationId: acme.id,
        appId: app.id,
        appVersionId: legacy.id,
        selector: "tier=canary",
        status: "completed",
        createdBy: "seed",
      },
    });
    const before = await tableCounts(db);
    await seedDemoData(db);
    expect(await db.appVersion.count({ where: { artifactUrl: { not: null } } })).toBe(0);
    expect(await db.rollout.count()).toBe(0);
    expect(await tableCounts(db)).toEqual({ ...before, appVersions: before.appVersions - 1, rollouts: 0 });
    expect(await db.app.findFirst({ where: { id: app.id } })).toBeNull();
  });
});

describe("db:seed --live (./edgefleet up on the dev profile)", () => {
  let live: TestDatabase;
  beforeAll(async () => {
    live = await createMigratedDatabase();
  });
  afterAll(async () => {
    await live?.drop();
  });

  it("leaves statuses and instances to the live agents, and never sets them again", async () => {
    const db = live.db;
    await seedDemoData(db, { liveFleet: true });
    const nodes = await db.node.findMany({ include: { site: true } });
    const names = DEMO_ORGANIZATIONS.flatMap((demo) => demoNodes(demo).map((node) => node.name));
    expect(nodes.map((node) => node.name).sort()).toEqual([...names].sort());
    // Enrolled, never seen: each node's agent brings it online; every one of them is on a site.
    for (const node of nodes) {
      expect(node, node.name).toMatchObject({ status: "offline", lastSeenAt: null, agentVersion: null });
      expect(node.site?.name, node.name).toBe((node.labels as Record<string, string>).site);
    }
    const instances = await db.appInstance.findMany();
    expect(instances.length).toBeGreaterThan(0);
    expect(instances.every((i) => i.observedVersionId === null && i.state === "pending")).toBe(true);

    // What an agent reported stays as it is when `up` seeds again.
    await db.node.updateMany({ data: { status: "online", lastSeenAt: new Date() } });
    const counts = await tableCounts(db);
    await seedDemoData(db, { liveFleet: true });
    expect(await db.node.count({ where: { status: { not: "online" } } })).toBe(0);
    expect(await tableCounts(db)).toEqual(counts);
  });

  it("moves nodes a simulated seed left pending on, or their agents could not enroll", async () => {
    const db = live.db;
    await seedDemoData(db);
    expect(await db.node.count({ where: { status: "pending" } })).toBe(5);
    await seedDemoData(db, { liveFleet: true });
    expect(await db.node.count({ where: { status: "pending" } })).toBe(0);
  });
});
