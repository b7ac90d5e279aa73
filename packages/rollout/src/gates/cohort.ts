/**
 * The baseline cohort: comparable nodes still on the old version, against which a batch (the
 * canary cohort) is compared. Pure and deterministic. How it chooses (README "Metric gates"):
 *
 * - candidates are what the caller passes: online nodes that run the rollout's app on another
 *   version and that the rollout has not dispatched;
 * - the canary is split into strata by (site, hardware), where hardware is the values of the
 *   `hardwareLabels` a node has (default `hw`, `hardware`, `arch`, `model`);
 * - the baseline's size is twice the canary's, at least 10 and at most 500 (as many as there are
 *   candidates), shared between the strata in proportion to their canary nodes;
 * - each stratum takes, in this order: nodes of the same site and hardware, of the same hardware
 *   on another site, of the same site with other hardware, then any; within a tier in the order
 *   of a hash of (seed, node id) — the controller's seed is the rollout and batch, so each batch
 *   draws its own sample of the fleet rather than the same lowest ids every time (a few outlier
 *   nodes that always made the baseline would bias every verdict the same way); without a seed,
 *   by node id;
 * - what a stratum cannot fill is filled from the remaining candidates.
 *
 * The result says how well it matched (counts per tier), shown with the verdict.
 */
import { seededHash } from "../seeded-hash";

export interface CohortNode {
  id: string;
  siteId: string | null;
  labels: Record<string, string>;
}

export const DEFAULT_HARDWARE_LABELS = ["hw", "hardware", "arch", "model"] as const;
export const MIN_BASELINE_NODES = 10;
export const MAX_BASELINE_NODES = 500;

export interface BaselineMatch {
  siteAndHardware: number;
  hardware: number;
  site: number;
  other: number;
}

export interface Baseline {
  nodeIds: string[];
  match: BaselineMatch;
}

const TIERS = ["siteAndHardware", "hardware", "site", "other"] as const;

export function hardwareKey(node: CohortNode, hardwareLabels: readonly string[]): string {
  return hardwareLabels.map((key) => `${key}=${node.labels[key] ?? ""}`).join(",");
}

/** Splits `total` into parts proportional to `weights` (largest remainder), summing to `total`. */
export function proportionalShares(weights: readonly number[], total: number): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum === 0) return weights.map(() => 0);
  const exact = weights.map((w) => (w * total) / sum);
  const shares = exact.map(Math.floor);
  let left = total - shares.reduce((a, b) => a + b, 0);
  const byRemainder = exact
    .map((value, index) => ({ index, remainder: value - Math.floor(value) }))
    .sort((a, b) => b.remainder - a.remainder || a.index - b.index);
  for (const { index } of byRemainder) {
    if (left <= 0) break;
    shares[index] = (shares[index] ?? 0) + 1;
    left--;
  }
  return shares;
}

export function baselineSize(canaryNodes: number, candidates: number): number {
  const wanted = Math.min(MAX_BASELINE_NODES, Math.max(MIN_BASELINE_NODES, 2 * canaryNodes));
  return Math.min(wanted, candidates);
}

export function chooseBaseline(input: {
  canary: readonly CohortNode[];
  candidates: readonly CohortNode[];
  hardwareLabels?: readonly string[];
  /** Orders candidates within a tier (see above); e.g. `<rollout id>:<batch>`. */
  seed?: string;
}): Baseline {
  const hardwareLabels = input.hardwareLabels ?? DEFAULT_HARDWARE_LABELS;
  const canaryIds = new Set(input.canary.map((n) => n.id));
  const byId = (a: CohortNode, b: CohortNode) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const seed = input.seed;
  const rank = new Map<string, number>();
  const order =
    seed === undefined
      ? byId
      : (a: CohortNode, b: CohortNode) => (rank.get(a.id) ?? 0) - (rank.get(b.id) ?? 0) || byId(a, b);
  const candidates = [
    ...new Map(input.candidates.filter((n) => !canaryIds.has(n.id)).map((n) => [n.id, n])).values(),
  ];
  if (seed !== undefined) for (const node of candidates) rank.set(node.id, seededHash(seed, node.id));
  candidates.sort(order);
  const match: BaselineMatch = { siteAndHardware: 0, hardware: 0, site: 0, other: 0 };
  const size = baselineSize(input.canary.length, candidates.length);
  if (size === 0) return { nodeIds: [], match };

  const strata = new Map<string, { siteId: string | null; hardware: string; canary: number }>();
  for (const node of input.canary) {
    const hardware = hardwareKey(node, hardwareLabels);
    const key = `${node.siteId ?? ""}\u0000${hardware}`;
    const stratum = strata.get(key) ?? { siteId: node.siteId, hardware, canary: 0 };
    stratum.canary++;
    strata.set(key, stratum);
  }
  const ordered = [...strata.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
  const quotas = proportionalShares(
    ordered.map((s) => s.canary),
    size,
  );

  // Candidates indexed by how they can match, each list in id order: linear in the candidates,
  // whatever the number of strata.
  const bySiteAndHardware = new Map<string, CohortNode[]>();
  const byHardware = new Map<string, CohortNode[]>();
  const bySite = new Map<string, CohortNode[]>();
  const push = (map: Map<string, CohortNode[]>, key: string, node: CohortNode) => {
    const list = map.get(key);
    if (list) list.push(node);
    else map.set(key, [node]);
  };
  for (const node of candidates) {
    const hardware = hardwareKey(node, hardwareLabels);
    push(bySiteAndHardware, `${node.siteId ?? ""}\u0000${hardware}`, node);
    push(byHardware, hardware, node);
    push(bySite, node.siteId ?? "", node);
  }
  const used = new Set<string>();
  const chosen: string[] = [];
  ordered.forEach((stratum, index) => {
    let quota = quotas[index] ?? 0;
    const tiers: Array<[(typeof TIERS)[number], readonly CohortNode[]]> = [
      ["siteAndHardware", bySiteAndHardware.get(`${stratum.siteId ?? ""}\u0000${stratum.hardware}`) ?? []],
      ["hardware", byHardware.get(stratum.hardware) ?? []],
      ["site", bySite.get(stratum.siteId ?? "") ?? []],
    ];
    for (const [tier, list] of tiers) {
      for (const node of list) {
        if (quota <= 0) return;
        if (used.has(node.id)) continue;
        used.add(node.id);
        chosen.push(node.id);
        match[tier]++;
        quota--;
      }
    }
  });
  for (const node of candidates) {
    if (chosen.length >= size) break;
    if (used.has(node.id)) continue;
    used.add(node.id);
    chosen.push(node.id);
    match.other++;
  }
  return { nodeIds: chosen, match };
}
