/**
 * What the console benchmark seeds: a large organization (100,000 nodes, 10 app instances each
 * by default) and a second, smaller one so that every query's tenant filter has rows to skip.
 * Pure: sizes and distributions only; seed.ts turns a plan into SQL.
 */

export interface OrganizationPlan {
  /** Existing demo organization (signed-in users are its members through Keycloak). */
  slug: string;
  nodes: number;
  sites: number;
  appsPerNode: number;
}

export interface SeedPlan {
  organizations: OrganizationPlan[];
  /** Nodes inserted per statement (one progress step). */
  chunkNodes: number;
}

/** Share of each value in percent; the shares of one label add up to 100. */
export const DISTRIBUTIONS = {
  status: { online: 85, offline: 10, pending: 3, revoked: 2 },
  tier: { prod: 80, staging: 15, canary: 5 },
  hw: { "ipc-x86": 40, rpi4: 25, rpi5: 20, "jetson-orin": 15 },
  agentVersion: { "1.4.2": 55, "1.4.1": 25, "1.3.9": 15, "1.5.0-rc.1": 5 },
  /** Instance states on online nodes (pending nodes' instances stay pending). */
  instanceState: { running: 96, failed: 2, starting: 1, pulling: 1 },
} as const;

/** Regions, assigned to sites round-robin. */
export const REGIONS = ["eu-west", "eu-north", "eu-central", "us-east", "us-west", "ap-south"] as const;

export function sitesOf(plan: OrganizationPlan): Array<{ name: string; region: string }> {
  return Array.from({ length: plan.sites }, (_, i) => ({
    name: `plant-${i + 1}`,
    region: REGIONS[i % REGIONS.length] as string,
  }));
}

/** `edge-000042`: the same names in both organizations, so a missing tenant filter shows. */
export function nodeName(index: number): string {
  return `edge-${String(index).padStart(6, "0")}`;
}

export function seedPlan(options: {
  nodes: number;
  appsPerNode: number;
  sites: number;
  secondOrganizationNodes: number;
  chunkNodes?: number;
}): SeedPlan {
  for (const [name, value] of Object.entries(options)) {
    if (!Number.isInteger(value) || value < 0)
      throw new RangeError(`${name} must be a whole number, got ${value}`);
  }
  if (options.nodes < 1 || options.sites < 1)
    throw new RangeError("a plan needs at least one node and one site");
  if (options.nodes > 999_999) throw new RangeError("node names have six digits: at most 999,999 nodes");
  const organizations: OrganizationPlan[] = [
    { slug: "acme", nodes: options.nodes, sites: options.sites, appsPerNode: options.appsPerNode },
  ];
  if (options.secondOrganizationNodes > 0)
    organizations.push({
      slug: "globex",
      nodes: options.secondOrganizationNodes,
      sites: Math.max(1, Math.round((options.sites * options.secondOrganizationNodes) / options.nodes)),
      appsPerNode: options.appsPerNode,
    });
  return { organizations, chunkNodes: options.chunkNodes ?? 10_000 };
}

export function planTotals(plan: SeedPlan): {
  nodes: number;
  appInstances: number;
  sites: number;
  steps: number;
} {
  let nodes = 0;
  let appInstances = 0;
  let sites = 0;
  let steps = 0;
  for (const organization of plan.organizations) {
    nodes += organization.nodes;
    appInstances += organization.nodes * organization.appsPerNode;
    sites += organization.sites;
    steps += nodeChunks(organization.nodes, plan.chunkNodes).length;
  }
  return { nodes, appInstances, sites, steps };
}

/** Inclusive 1-based index ranges of `size` nodes (the last one shorter). */
export function nodeChunks(total: number, size: number): Array<{ from: number; to: number }> {
  if (!(size >= 1)) throw new RangeError(`chunk size must be at least 1, got ${size}`);
  const chunks: Array<{ from: number; to: number }> = [];
  for (let from = 1; from <= total; from += size) chunks.push({ from, to: Math.min(total, from + size - 1) });
  return chunks;
}

/**
 * A SQL CASE that maps a bucket in 0..99 to the values of a distribution (cumulative shares),
 * e.g. `CASE WHEN b < 85 THEN 'online' WHEN b < 95 THEN 'offline' … END`.
 */
export function bucketCase(bucketSql: string, distribution: Record<string, number>, cast = ""): string {
  const entries = Object.entries(distribution);
  const total = entries.reduce((sum, [, share]) => sum + share, 0);
  if (total !== 100) throw new RangeError(`shares must add up to 100, got ${total}`);
  let upTo = 0;
  const whens = entries.map(([value, share]) => {
    upTo += share;
    return `WHEN ${bucketSql} < ${upTo} THEN '${value.replaceAll("'", "''")}'${cast}`;
  });
  return `(CASE ${whens.join(" ")} END)`;
}
