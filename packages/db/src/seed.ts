import type { Db } from "./client";
import { demoArtifact } from "./demo-artifacts";
import { setDesiredApps } from "./desired-state";
import type { AppInstanceState, NodeStatus } from "./generated/prisma/client";
import { type TenantDb, tenantDb } from "./tenant";

/**
 * Demo data for development and browser tests. Idempotent: every row is upserted by its natural
 * key, so running it again changes no counts. Node names start with the organization slug so
 * each tenant's nodes are recognisable. Users are created unlinked (keycloakSubject null); the
 * first sign-in links them by e-mail.
 *
 * Two shapes of fleet:
 * - simulated (default; the `test` profile and tests): statuses, last-seen times and what each
 *   node runs are written here, a mix of online, offline and never-connected nodes, refreshed on
 *   every run;
 * - live (`./edgefleet up` on the dev profile): every node is left to the hollow agent that the
 *   demo loader (apps/gateway/src/cli/demo.ts) starts for it on its site's leaf node, so status,
 *   heartbeats and instances are real; the seed never writes them (nor resets them on re-runs).
 *
 * Either way a node's desired apps are set only while it has none of that app: later changes
 * (a rollout) are never undone by seeding again. Versions are `upload` versions whose artifact
 * (demo-artifacts.ts) the demo loader uploads into the organization's object store.
 */

export interface SeedOptions {
  now?: Date;
  /** Live hollow agents will run the nodes (dev demo): do not write statuses or instances. */
  liveFleet?: boolean;
}

/** Artifact URLs of the demo versions seeded before artifacts were real (they never imported). */
const LEGACY_ARTIFACT_HOST = "https://artifacts.edgefleet.example/";

interface DemoApp {
  name: string;
  description: string;
  versions: string[];
  /** Which nodes run it, and which version they want. */
  placement: (node: DemoNode) => string | undefined;
}

interface DemoNode {
  name: string;
  site: string;
  index: number;
  tier: "canary" | "stable";
  hw: string;
  status: NodeStatus;
}

interface DemoOrganization {
  slug: string;
  name: string;
  owner: { email: string; name: string };
  sites: Array<{ name: string; description: string; nodeCount: number }>;
  hardware: string[];
  apps: DemoApp[];
}

export const DEMO_ORGANIZATIONS: DemoOrganization[] = [
  {
    slug: "acme",
    name: "Acme Energy",
    owner: { email: "alice@acme.example", name: "Alice Anders" },
    sites: [
      { name: "plant-7", description: "Gas turbine plant 7", nodeCount: 8 },
      { name: "plant-9", description: "Solar plant 9", nodeCount: 8 },
      { name: "depot-north", description: "Northern maintenance depot", nodeCount: 8 },
    ],
    hardware: ["ipc-x86", "rpi4", "jetson-orin"],
    apps: [
      {
        name: "telemetry-collector",
        description: "Collects turbine and inverter telemetry",
        versions: ["1.4.0", "1.5.0"],
        placement: (node) => (node.tier === "canary" ? "1.5.0" : "1.4.0"),
      },
      {
        name: "modbus-bridge",
        description: "Bridges Modbus field devices to NATS",
        versions: ["2.0.1"],
        placement: (node) => (node.site.startsWith("plant-") ? "2.0.1" : undefined),
      },
    ],
  },
  {
    slug: "globex",
    name: "Globex Logistics",
    owner: { email: "bob@globex.example", name: "Bob Brenner" },
    sites: [
      { name: "hub-rotterdam", description: "Rotterdam cross-dock hub", nodeCount: 6 },
      { name: "hub-hamburg", description: "Hamburg cross-dock hub", nodeCount: 6 },
    ],
    hardware: ["ipc-arm64", "rpi5"],
    apps: [
      {
        name: "route-optimizer",
        description: "Optimises dock assignments",
        versions: ["0.9.0", "1.0.0"],
        placement: (node) => (node.tier === "canary" ? "1.0.0" : "0.9.0"),
      },
    ],
  },
];

/** Deterministic node list of an organization: `<slug>-<site>-NN`, two canaries per site. */
export function demoNodes(organization: DemoOrganization): DemoNode[] {
  return organization.sites.flatMap((site) =>
    Array.from({ length: site.nodeCount }, (_, i): DemoNode => {
      const index = i + 1;
      return {
        name: `${organization.slug}-${site.name}-${String(index).padStart(2, "0")}`,
        site: site.name,
        index,
        tier: index <= 2 ? "canary" : "stable",
        hw: organization.hardware[i % organization.hardware.length] ?? "generic",
        // every fifth node is offline, and the last one of each site never connected
        status: index === site.nodeCount ? "pending" : index % 5 === 0 ? "offline" : "online",
      };
    }),
  );
}

export interface SeedSummary {
  organizations: number;
  users: number;
  sites: number;
  nodes: number;
  appInstances: number;
}

export async function seedDemoData(db: Db, options: SeedOptions = {}): Promise<SeedSummary> {
  const summary: SeedSummary = { organizations: 0, users: 0, sites: 0, nodes: 0, appInstances: 0 };
  for (const demo of DEMO_ORGANIZATIONS) {
    const organization = await db.organization.upsert({
      where: { slug: demo.slug },
      create: { slug: demo.slug, name: demo.name },
      update: { name: demo.name },
    });
    // keycloakSubject is left alone on update: a sign-in may already have linked the user.
    const owner = await db.user.upsert({
      where: { email: demo.owner.email },
      create: { email: demo.owner.email, name: demo.owner.name },
      update: { name: demo.owner.name },
    });
    const tdb = tenantDb(db, organization.id);
    await tdb.membership.upsert({
      where: { organizationId_userId: { organizationId: organization.id, userId: owner.id } },
      create: { organizationId: organization.id, userId: owner.id, role: "owner" },
      update: {},
    });
    summary.organizations += 1;
    summary.users += 1;
    summary.sites += demo.sites.length;
    const counts = await seedInventory(db, organization.id, demo, {
      now: options.now ?? new Date(),
      live: options.liveFleet ?? false,
    });
    summary.nodes += counts.nodes;
    summary.appInstances += counts.appInstances;
  }
  return summary;
}

async function seedInventory(
  db: Db,
  organizationId: string,
  demo: DemoOrganization,
  { now, live }: { now: Date; live: boolean },
) {
  const tdb: TenantDb = tenantDb(db, organizationId);
  await removeLegacyDemoRows(tdb);
  const siteIds = new Map<string, string>();
  for (const site of demo.sites) {
    const row = await tdb.site.upsert({
      where: { organizationId_name: { organizationId, name: site.name } },
      create: { organizationId, name: site.name, description: site.description },
      update: { description: site.description },
    });
    siteIds.set(site.name, row.id);
  }

  const versionIds = new Map<string, { appId: string; versionId: string }>();
  for (const app of demo.apps) {
    const appRow = await tdb.app.upsert({
      where: { organizationId_name: { organizationId, name: app.name } },
      create: { organizationId, name: app.name, description: app.description },
      update: { description: app.description },
    });
    for (const version of app.versions) {
      // Versions are immutable: created once, waiting for their upload (hash declared).
      const versionRow = await tdb.appVersion.upsert({
        where: { organizationId_appId_version: { organizationId, appId: appRow.id, version } },
        create: {
          organizationId,
          appId: appRow.id,
          version,
          artifactSource: "upload",
          artifactSha256: demoArtifact(demo.slug, app.name, version).sha256,
          artifactState: "pending",
          runSpec: { command: ["./artifact"], restart: "always" },
          createdBy: "seed",
        },
        update: {},
      });
      versionIds.set(`${app.name}@${version}`, { appId: appRow.id, versionId: versionRow.id });
    }
  }

  const nodes = demoNodes(demo);
  const existing = new Set(
    (await tdb.appInstance.findMany({ select: { nodeId: true, appId: true } })).map(
      (instance) => `${instance.nodeId}/${instance.appId}`,
    ),
  );
  let appInstances = 0;
  for (const node of nodes) {
    const placement = {
      siteId: siteIds.get(node.site) ?? null,
      labels: { site: node.site, tier: node.tier, hw: node.hw },
    };
    const nodeRow = live
      ? await upsertLiveNode(tdb, organizationId, node.name, placement)
      : await tdb.node.upsert({
          where: { organizationId_name: { organizationId, name: node.name } },
          create: { organizationId, name: node.name, ...placement, ...simulatedStatus(node, now) },
          update: { ...placement, ...simulatedStatus(node, now) },
        });
    // Desired apps go through setDesiredApps so they carry revisions; only apps the node has no
    // instance of, so that seeding again neither takes a revision nor undoes a rollout.
    const placed = demo.apps.flatMap((app) => {
      const version = app.placement(node);
      const ids = version ? versionIds.get(`${app.name}@${version}`) : undefined;
      return ids ? [ids] : [];
    });
    const missing = placed.filter((ids) => !existing.has(`${nodeRow.id}/${ids.appId}`));
    if (missing.length > 0) {
      await setDesiredApps(db, organizationId, nodeRow.id, { put: missing.map((ids) => ids.versionId) });
    }
    appInstances += placed.length;
    if (live) continue;
    // The simulated fleet: what an agent would have reported.
    for (const ids of placed) {
      const instanceState: AppInstanceState =
        node.status === "online" ? "running" : node.status === "offline" ? "stopped" : "pending";
      await tdb.appInstance.update({
        where: { nodeId_appId: { nodeId: nodeRow.id, appId: ids.appId } },
        data: {
          observedVersionId: node.status === "pending" ? null : ids.versionId,
          state: instanceState,
          reason: node.status === "offline" ? "node offline" : null,
        },
      });
    }
  }
  return { nodes: nodes.length, appInstances };
}

function simulatedStatus(node: DemoNode, now: Date) {
  const seen =
    node.status === "pending"
      ? null
      : new Date(now.getTime() - (node.status === "online" ? 15_000 : 3 * 3_600_000));
  return {
    status: node.status,
    agentVersion: node.status === "pending" ? null : "0.1.0",
    lastSeenAt: seen,
  };
}

/**
 * A node a live agent will run: created enrolled but not seen yet (offline until its agent says
 * hello). Its status is the agent's from then on; only a `pending` left by a simulated seed of the
 * same database is moved on (enrollment would otherwise keep answering "pending").
 */
async function upsertLiveNode(
  tdb: TenantDb,
  organizationId: string,
  name: string,
  placement: { siteId: string | null; labels: Record<string, string> },
) {
  const found = await tdb.node.findUnique({ where: { organizationId_name: { organizationId, name } } });
  if (!found) {
    return tdb.node.create({ data: { organizationId, name, ...placement, status: "offline" } });
  }
  return tdb.node.update({
    where: { id: found.id },
    data: { ...placement, ...(found.status === "pending" ? { status: "offline" as const } : {}) },
  });
}

/**
 * Databases seeded before the demo was live hold apps whose versions named example URLs (never
 * importable) and a rollout written straight into the table: both go, and are made again properly.
 */
async function removeLegacyDemoRows(tdb: TenantDb) {
  await tdb.rollout.deleteMany({ where: { createdBy: "seed" } });
  await tdb.app.deleteMany({
    where: { versions: { some: { artifactUrl: { startsWith: LEGACY_ARTIFACT_HOST } } } },
  });
}
