import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  createEnrollmentToken,
  type Db,
  DEMO_ORGANIZATIONS,
  demoNodes,
  hashEnrollmentToken,
} from "@edgefleet/db";
import type { TenancySecrets } from "@edgefleet/nats-tenancy";
import { createUser, fromSeed } from "@nats-io/nkeys";
import { z } from "zod";
import type { TenantAccounts } from "../enrollment/tenant-accounts.js";
import { createLeafBundle } from "../sites/leaf-bundle.js";

/**
 * The live demo fleet (`./edgefleet up`, dev profile): every seeded node of the demo
 * organizations gets a hollow agent on its site's leaf node. This prepares what the stack script
 * then runs: one leaf.conf + site.creds per site (the site leaf bundle an operator downloads), and
 * `fleet.json` for `edgefleet-agent hollow --nodes`: per node its name, its organization's
 * enrollment token, its key and its site's leaf. Each node's key is provisioned here (its public
 * key on the node row, like a key burnt in at the factory), so the agent's real enrollment answers
 * for the seeded node instead of creating another. Keys and tokens are kept in `fleet.json` for
 * the next `up`; the file is the demo's secret (mode 0600, under var/).
 */

/** Bound of each demo site's artifact cache. */
const DEMO_SITE_CACHE_BYTES = 64 * 1024 * 1024;

export interface DemoFleetOptions {
  /** Where the leaf configs and fleet.json go (var/<profile>/demo). */
  dir: string;
  /** The first site's leaf listens on 127.0.0.1:<leafPortBase>, the next one on +1, … */
  leafPortBase: number;
  /** The hub's leafnode URL(s) the leaves connect to (NATS_LEAF_URL). */
  hubLeafUrls: string[];
  /** Where a node without a site connects (the hub's client URL). */
  hubUrls: string[];
}

export interface DemoLeaf {
  /** `<org>-<site>`, also the leaf's server name. */
  name: string;
  configPath: string;
  port: number;
}

export interface DemoFleet {
  leaves: DemoLeaf[];
  nodesFile: string;
  nodes: number;
}

/** What fleet.json holds: read back on the next run to keep keys and tokens. */
const fleetFileSchema = z.object({
  tokens: z.record(z.string(), z.string()).default({}),
  nodes: z
    .array(z.object({ name: z.string(), token: z.string(), seed: z.string(), url: z.string() }))
    .default([]),
});
type FleetFile = z.infer<typeof fleetFileSchema>;

/** Label of the nodes the demo's earlier form enrolled beside the seeded ones (removed now). */
const LEGACY_SIMULATED_LABEL = "simulated";

export async function prepareDemoFleet(
  db: Db,
  nats: { secrets: TenancySecrets; accounts: TenantAccounts },
  options: DemoFleetOptions,
): Promise<DemoFleet> {
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const nodesFile = join(options.dir, "fleet.json");
  const previous = readFleetFile(nodesFile);
  const seeds = new Map(previous.nodes.map((node) => [node.name, node.seed]));
  const next: FleetFile = { tokens: {}, nodes: [] };
  const leaves: DemoLeaf[] = [];

  for (const demo of DEMO_ORGANIZATIONS) {
    const organization = await db.organization.findUnique({ where: { slug: demo.slug } });
    if (!organization) throw new Error(`no organization "${demo.slug}" (is the database seeded?)`);
    await db.node.deleteMany({
      where: {
        organizationId: organization.id,
        labels: { path: [LEGACY_SIMULATED_LABEL], equals: "true" },
      },
    });
    const token = await demoToken(db, organization.id, previous.tokens[demo.slug]);
    next.tokens[demo.slug] = token;

    // One leaf node per site, from the same bundle an operator downloads for a real site.
    const leafUrlOfSite = new Map<string, string>();
    for (const site of demo.sites) {
      const row = await db.site.findUnique({
        where: { organizationId_name: { organizationId: organization.id, name: site.name } },
      });
      if (!row) continue;
      const name = `${demo.slug}-${site.name}`;
      const port = options.leafPortBase + leaves.length;
      const credsPath = join(options.dir, `${name}.creds`);
      const bundle = await createLeafBundle(db, nats.secrets, nats.accounts, {
        organizationId: organization.id,
        siteId: row.id,
        hubLeafUrls: options.hubLeafUrls,
        listen: `127.0.0.1:${port}`,
        credentialsPath: credsPath,
        // Its own store per leaf (five leaves on one machine), small: the demo's artifacts are 96 KiB.
        siteCache: { storeDir: join(options.dir, `${name}-cache`), maxBytes: DEMO_SITE_CACHE_BYTES },
      });
      const configPath = join(options.dir, `${name}.conf`);
      writeSecret(configPath, bundle.config);
      writeSecret(credsPath, bundle.creds);
      for (const [file, content] of Object.entries(bundle.companions))
        writeSecret(join(options.dir, file), content);
      leaves.push({ name, configPath, port });
      leafUrlOfSite.set(row.id, `nats://127.0.0.1:${port}`);
    }

    // Every seeded node a person has not revoked, on its site's leaf (or the hub without a site).
    const nodes = await db.node.findMany({
      where: {
        organizationId: organization.id,
        name: { in: demoNodes(demo).map((node) => node.name) },
        status: { not: "revoked" },
      },
      orderBy: { name: "asc" },
    });
    for (const node of nodes) {
      const seed = await provisionKey(db, node, seeds.get(node.name));
      const url = (node.siteId && leafUrlOfSite.get(node.siteId)) || (options.hubUrls[0] ?? "");
      next.nodes.push({ name: node.name, token, seed, url });
    }
  }
  writeSecret(nodesFile, `${JSON.stringify(next, null, 2)}\n`);
  return { leaves, nodesFile, nodes: next.nodes.length };
}

function readFleetFile(path: string): FleetFile {
  if (!existsSync(path)) return { tokens: {}, nodes: [] };
  const parsed = fleetFileSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
  return parsed.success ? parsed.data : { tokens: {}, nodes: [] };
}

function writeSecret(path: string, content: string): void {
  writeFileSync(path, content, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/**
 * The organization's demo enrollment token: last run's while it still works, else a new one. Its
 * one use is never spent: enrolling a key the control plane already has on a node takes none.
 */
async function demoToken(db: Db, organizationId: string, previous: string | undefined): Promise<string> {
  if (previous) {
    const row = await db.enrollmentToken.findUnique({ where: { tokenHash: hashEnrollmentToken(previous) } });
    if (
      row &&
      row.organizationId === organizationId &&
      !row.revokedAt &&
      row.expiresAt.getTime() > Date.now()
    ) {
      return previous;
    }
  }
  const { token } = await createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(Date.now() + 90 * 86_400_000),
    maxUses: 1,
    description: "local demo: the live fleet of ./edgefleet up (its nodes' keys are provisioned)",
    createdBy: "demo",
  });
  return token;
}

/** The node's key: last run's if the node still has it, else a new one put on the node row. */
async function provisionKey(
  db: Db,
  node: { id: string; publicKey: string | null },
  previousSeed: string | undefined,
): Promise<string> {
  if (previousSeed && node.publicKey === fromSeed(new TextEncoder().encode(previousSeed)).getPublicKey()) {
    return previousSeed;
  }
  const key = createUser();
  await db.node.update({ where: { id: node.id }, data: { publicKey: key.getPublicKey() } });
  return new TextDecoder().decode(key.getSeed());
}
