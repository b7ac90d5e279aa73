/**
 * Automatic canary selection (issue 11): which nodes the first batch takes. Not the first N by
 * id (those are the oldest nodes, often of one site and one hardware generation) but a sample
 * stratified across sites and hardware, so that a bad version meets every kind of node early and
 * the metric gates compare like with like. Pure and deterministic for a seed.
 *
 * How (README "Automatic canary selection"):
 * 1. Only candidates the caller passes (the nodes the step may take: the target, or a selector
 *    step's matches); never anything else.
 * 2. Candidates are split into three tiers, used in order: online nodes whose site is inside its
 *    maintenance window now; online nodes of sites whose window is closed (they wait for it);
 *    offline nodes (the batch's offline policy handles them). A canary that can start now proves
 *    the version sooner, so a later tier is only drawn on when the earlier ones run out.
 * 3. Within a tier, strata are (site, hardware), hardware being the values of the hardware
 *    labels (`hw`, `hardware`, `arch`, `model` by default, as the baseline cohort uses). First
 *    every stratum gets one node, choosing strata that add a site or a hardware kind not yet
 *    covered before those that add neither, so that a batch smaller than the number of strata
 *    still covers as many sites and hardware kinds as it can; then the rest of the batch is
 *    shared between the strata in proportion to their size (largest remainder).
 * 4. Ties and the order within a stratum go by a hash of (seed, node id): deterministic for a
 *    seed, unrelated to id order.
 */
import { DEFAULT_HARDWARE_LABELS, hardwareKey, proportionalShares } from "./gates/cohort";
import { siteKey, type TargetNode } from "./nodes";
import { seededHash } from "./seeded-hash";

export { seededHash };

export interface CanaryInput {
  /** The nodes the batch may take, in any order. */
  candidates: readonly TargetNode[];
  /** How many to take (at most the candidates). */
  size: number;
  seed: string;
  hardwareLabels?: readonly string[];
  /** Whether a site (null: the site-less nodes) is inside its maintenance window now. */
  siteOpen?: (siteId: string | null) => boolean;
}

export type CanaryTier = "ready" | "window_closed" | "offline";

export interface CanaryStratum {
  siteId: string | null;
  /** `hw=pi4,hardware=,arch=arm64,model=` (the hardware labels' values, empty when absent). */
  hardware: string;
  candidates: number;
  picked: number;
}

export interface CanarySelection {
  /** The picked node ids, in dispatch order. */
  nodeIds: string[];
  /** Every stratum of the candidates, with how many it got. */
  strata: CanaryStratum[];
  /** Picked nodes by tier. */
  tiers: Record<CanaryTier, number>;
  /** Sites of the candidates whose window is closed now (none picked unless the open ones ran out). */
  closedSites: (string | null)[];
}

interface Stratum {
  key: string;
  siteId: string | null;
  hardware: string;
  /** Ordered by seeded hash. */
  nodes: TargetNode[];
  rank: number;
  picked: number;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function strataOf(nodes: readonly TargetNode[], seed: string, hardwareLabels: readonly string[]): Stratum[] {
  const byKey = new Map<string, Stratum>();
  for (const node of nodes) {
    const hardware = hardwareKey(node, hardwareLabels);
    const key = `${siteKey(node.siteId)}\u0000${hardware}`;
    const stratum = byKey.get(key) ?? {
      key,
      siteId: node.siteId,
      hardware,
      nodes: [],
      rank: seededHash(seed, key),
      picked: 0,
    };
    stratum.nodes.push(node);
    byKey.set(key, stratum);
  }
  const ranked = new Map<string, number>();
  for (const stratum of byKey.values()) {
    for (const node of stratum.nodes) ranked.set(node.id, seededHash(seed, node.id));
    stratum.nodes.sort((a, b) => (ranked.get(a.id) ?? 0) - (ranked.get(b.id) ?? 0) || compare(a.id, b.id));
  }
  return [...byKey.values()].sort((a, b) => a.rank - b.rank || compare(a.key, b.key));
}

/** Picks `size` nodes of one tier, stratified (step 3 above). */
function pickStratified(strata: Stratum[], size: number): TargetNode[] {
  const picked: TargetNode[] = [];
  if (size <= 0) return picked;
  // One per stratum, greedily preferring strata that cover a new site and a new hardware kind.
  const sites = new Set<string>();
  const hardware = new Set<string>();
  const left = [...strata];
  while (picked.length < size && left.length > 0) {
    let best = 0;
    let bestGain = -1;
    left.forEach((stratum, i) => {
      const gain = (sites.has(siteKey(stratum.siteId)) ? 0 : 2) + (hardware.has(stratum.hardware) ? 0 : 1);
      if (gain > bestGain) {
        best = i;
        bestGain = gain;
      }
    });
    const [stratum] = left.splice(best, 1);
    if (!stratum) break;
    sites.add(siteKey(stratum.siteId));
    hardware.add(stratum.hardware);
    const node = stratum.nodes[0];
    if (node) picked.push(node);
    stratum.picked = 1;
  }
  // The rest in proportion to what each stratum has left (never more than it has).
  const rest = size - picked.length;
  if (rest > 0) {
    const shares = proportionalShares(
      strata.map((s) => s.nodes.length - s.picked),
      rest,
    );
    // Interleaved round by round so that the dispatch order stays balanced too.
    const quota = strata.map((s, i) => ({ stratum: s, extra: shares[i] ?? 0 }));
    for (let round = 0; picked.length < size; round++) {
      let any = false;
      for (const entry of quota) {
        if (round >= entry.extra) continue;
        const node = entry.stratum.nodes[entry.stratum.picked];
        if (!node) continue;
        entry.stratum.picked++;
        picked.push(node);
        any = true;
      }
      if (!any) break;
    }
  }
  return picked;
}

/** The canary: `size` candidates, stratified and tiered as described above. */
export function selectCanary(input: CanaryInput): CanarySelection {
  const hardwareLabels = input.hardwareLabels ?? DEFAULT_HARDWARE_LABELS;
  const siteOpen = input.siteOpen ?? (() => true);
  const unique = [...new Map(input.candidates.map((n) => [n.id, n])).values()];
  const openBySite = new Map<string, boolean>();
  const isOpen = (siteId: string | null) => {
    const key = siteKey(siteId);
    let open = openBySite.get(key);
    if (open === undefined) {
      open = siteOpen(siteId);
      openBySite.set(key, open);
    }
    return open;
  };
  const tierOf = (node: TargetNode): CanaryTier =>
    !node.online ? "offline" : isOpen(node.siteId) ? "ready" : "window_closed";
  const tiers: Record<CanaryTier, number> = { ready: 0, window_closed: 0, offline: 0 };
  const counts = new Map<string, CanaryStratum>();
  for (const node of unique) {
    const hardware = hardwareKey(node, hardwareLabels);
    const key = `${siteKey(node.siteId)}\u0000${hardware}`;
    const entry = counts.get(key) ?? { siteId: node.siteId, hardware, candidates: 0, picked: 0 };
    entry.candidates++;
    counts.set(key, entry);
  }

  const nodeIds: string[] = [];
  let size = Math.max(0, Math.min(Math.floor(input.size), unique.length));
  for (const tier of ["ready", "window_closed", "offline"] as const) {
    if (size === 0) break;
    const members = unique.filter((n) => tierOf(n) === tier);
    const picked = pickStratified(
      strataOf(members, input.seed, hardwareLabels),
      Math.min(size, members.length),
    );
    for (const node of picked) {
      nodeIds.push(node.id);
      const entry = counts.get(`${siteKey(node.siteId)}\u0000${hardwareKey(node, hardwareLabels)}`);
      if (entry) entry.picked++;
    }
    tiers[tier] = picked.length;
    size -= picked.length;
  }
  const closedSites = [
    ...new Map(
      unique.filter((n) => !isOpen(n.siteId)).map((n) => [siteKey(n.siteId), n.siteId] as const),
    ).values(),
  ].sort((a, b) => compare(siteKey(a), siteKey(b)));
  const strata = [...counts.values()].sort(
    (a, b) => compare(siteKey(a.siteId), siteKey(b.siteId)) || compare(a.hardware, b.hardware),
  );
  return { nodeIds, strata, tiers, closedSites };
}
