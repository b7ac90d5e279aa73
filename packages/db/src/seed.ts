import type { Db } from "./client";
import { setDesiredApps } from "./desired-state";
import type { AppInstanceState, NodeStatus } from "./generated/prisma/client";
import { type TenantDb, tenantDb } from "./tenant";

/**
 * Demo data for development and browser tests. Idempotent: every row is upserted by its natural
 * key, so running it again changes no counts (it refreshes statuses and lastSeenAt).
 * Node names start with the organization slug so each tenant's nodes are recognisable.
 * Users are created unlinked (keycloakSubject null); the first sign-in links them by e-mail.
 */

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
  rollout: { app: string; version: string; selector: string };
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
    rollout: { app: "telemetry-collector", version: "1.5.0", selector: "tier=canary" },
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
    rollout: { app: "route-optimizer", version: "1.0.0", selector: "tier=canary" },
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

export async function seedDemoData(db: Db, now = new Date()): Promise<SeedSummary> {
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
    const counts = await seedInventory(db, organization.id, demo, now);
    summary.nodes += counts.nodes;
    summary.appInstances += counts.appInstances;
  }
  return summary;
}

async function seedInventory(db: Db, organizationId: string, demo: DemoOrganization, now: Date) {
  const tdb: TenantDb = tenantDb(db, organizationId);
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
      const artifact = {
        artifactUrl: `https://artifacts.edgefleet.example/${demo.slug}/${app.name}/${version}.tar.gz`,
        runSpec: { command: [app.name, "--config", `/etc/${app.name}.yaml`] },
      };
      const versionRow = await tdb.appVersion.upsert({
        where: { organizationId_appId_version: { organizationId, appId: appRow.id, version } },
        create: { organizationId, appId: appRow.id, version, ...artifact },
        update: artifact,
      });
      versionIds.set(`${app.name}@${version}`, { appId: appRow.id, versionId: versionRow.id });
    }
  }

  const nodes = demoNodes(demo);
  let appInstances = 0;
  for (const node of nodes) {
    const seen =
      node.status === "pending"
        ? null
        : new Date(now.getTime() - (node.status === "online" ? 15_000 : 3 * 3_600_000));
    const state = {
      status: node.status,
      siteId: siteIds.get(node.site) ?? null,
      labels: { site: node.site, tier: node.tier, hw: node.hw },
      agentVersion: node.status === "pending" ? null : "0.1.0",
      lastSeenAt: seen,
    };
    const nodeRow = await tdb.node.upsert({
      where: { organizationId_name: { organizationId, name: node.name } },
      create: { organizationId, name: node.name, ...state },
      update: state,
    });
    // Desired apps go through setDesiredApps so they carry revisions (unchanged ones are skipped,
    // so seeding again uses no new revision); the observed side is what an agent would report.
    const placed = demo.apps.flatMap((app) => {
      const version = app.placement(node);
      const ids = version ? versionIds.get(`${app.name}@${version}`) : undefined;
      return ids ? [ids] : [];
    });
    await setDesiredApps(db, organizationId, nodeRow.id, { put: placed.map((ids) => ids.versionId) });
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
      appInstances += 1;
    }
  }

  const target = versionIds.get(`${demo.rollout.app}@${demo.rollout.version}`);
  if (target) {
    const existing = await tdb.rollout.findFirst({
      where: { appVersionId: target.versionId, selector: demo.rollout.selector },
    });
    if (!existing) {
      await tdb.rollout.create({
        data: {
          organizationId,
          appId: target.appId,
          appVersionId: target.versionId,
          selector: demo.rollout.selector,
          status: "completed",
          statusReason: "seeded as completed (no per-node history)",
          strategy: { batches: [{ count: 1 }, { percent: 100 }], successThreshold: 1 },
          createdBy: "seed",
          startedAt: new Date(now.getTime() - 86_400_000),
          finishedAt: new Date(now.getTime() - 82_800_000),
        },
      });
    }
  }
  return { nodes: nodes.length, appInstances };
}
