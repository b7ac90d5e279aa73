/**
 * The planner: which nodes go in which batch. Pure and deterministic; the console's dry run and
 * the controller (which freezes the plan when the rollout starts) call exactly this.
 */
import { matchesSelector, parseSelector } from "@edgefleet/selectors";
import { type CanaryTier, selectCanary } from "./canary";
import { DEFAULT_HARDWARE_LABELS } from "./gates/cohort";
import { isWithinMaintenanceWindow, maintenanceWindowState, type WindowState } from "./maintenance-windows";
import { checkNodes, siteKey, stratifiedOrder, type TargetNode, timeZoneOf } from "./nodes";
import {
  type BatchPolicy,
  type DisruptionBudget,
  type MaintenanceWindow,
  type RolloutStrategy,
  resolveBatchPolicy,
  type Size,
  siteUplinkBudget,
} from "./strategy";
import type { EpochMs } from "./time";

export interface PlanInput {
  /** Every node the rollout targets (its selector and sites), online or not. */
  nodes: readonly TargetNode[];
  /** A parsed strategy (`rolloutStrategySchema.parse`). */
  strategy: RolloutStrategy;
  /** The version being rolled out: nodes already on it are "already current". */
  targetVersionId: string;
  now: EpochMs;
}

export interface PlannedBatchSite {
  siteId: string | null;
  nodes: number;
  /** Of those, offline when planned (a preview hint: they are handled by the batch's offline policy). */
  offline: number;
}

export interface PlannedBatch {
  index: number;
  /** The step of `strategy.batches` it comes from, or the implicit last batch of the remainder. */
  source: { kind: "count" | "percent" | "selector"; step: number } | { kind: "remainder" };
  policy: BatchPolicy;
  /** Node ids in dispatch order. */
  nodeIds: string[];
  /** Per-site node counts, by site id (site-less nodes last). */
  sites: PlannedBatchSite[];
}

export interface PlannedSite {
  siteId: string | null;
  timeZone: string;
  /** The site's nodes in the rollout's target, already current ones included. */
  targetNodes: number;
  toUpdate: number;
  /** Most of its nodes updating at once (the disruption budget), null when unlimited. */
  maxUpdating: number | null;
  /** Its maintenance windows, null when it has none (always open). */
  windows: MaintenanceWindow[] | null;
  /** Whether it is inside a window at planning time, and until / from when. */
  windowNow: WindowState;
}

export type PlanWarning = { code: "empty_batch"; batch: number; message: string };

/** How the first batch (the canary) was chosen: its coverage of the candidates' strata. */
export interface CanaryPlan {
  seed: string;
  hardwareLabels: string[];
  /** Strata (site, hardware) among the batch's candidates, and how many of them it covers. */
  strata: { total: number; covered: number };
  sites: { total: number; covered: number };
  hardware: { total: number; covered: number };
  /** Picked nodes: online at an open site, online at a site whose window is closed, offline. */
  tiers: Record<CanaryTier, number>;
  /** Sites whose maintenance window was closed when planned (passed over while others could go). */
  closedSites: (string | null)[];
  /** Up to 20 strata the canary does not cover (a batch smaller than the strata count). */
  uncovered: Array<{ siteId: string | null; hardware: string; candidates: number }>;
}

export interface RolloutPlan {
  targetVersionId: string;
  plannedAt: EpochMs;
  totals: { target: number; toUpdate: number; alreadyCurrent: number; offline: number };
  /** Nodes already on the target version: counted, never dispatched. */
  alreadyCurrent: string[];
  /** Disjoint; together with `alreadyCurrent` they cover the target exactly. */
  batches: PlannedBatch[];
  /** Every site with a node in the target, by site id (site-less nodes last). */
  sites: PlannedSite[];
  warnings: PlanWarning[];
  /** The first batch's selection; null when it took every candidate (nothing to choose) or is "ordered"; absent in plans made before it existed. */
  canary?: CanaryPlan | null;
}

/**
 * Splits the target into batches.
 *
 * - Nodes already on the target version go to `alreadyCurrent`; the rest ("to update", N) are
 *   put in the stratified order of `stratifiedOrder` (site-balanced, by id within a site).
 * - Steps are filled in sequence, each from the nodes no earlier step took, in that order:
 *   `count: n` takes n; `percent: p` takes ceil(p% of N); `selector` takes the matching nodes,
 *   at most `limit` (a count, or ceil(p% of the nodes to update that match the selector)).
 * - The nodes left over form an implicit last batch with the default policy.
 * A step that gets no node is kept (so batch indexes equal step indexes) and warned about.
 */
export function planRollout(input: PlanInput): RolloutPlan {
  const { strategy, targetVersionId, now } = input;
  checkNodes(input.nodes);
  const alreadyCurrent = input.nodes
    .filter((n) => n.currentVersionId === targetVersionId)
    .map((n) => n.id)
    .sort();
  const order = stratifiedOrder(input.nodes.filter((n) => n.currentVersionId !== targetVersionId));
  const total = order.length;
  const taken = new Set<string>();
  const batches: PlannedBatch[] = [];
  const warnings: PlanWarning[] = [];

  let canary: CanaryPlan | null = null;
  const hardwareLabels = strategy.canary?.hardwareLabels ?? [...DEFAULT_HARDWARE_LABELS];
  const seed = strategy.canary?.seed ?? targetVersionId;
  // The first batch is a stratified sample (canary.ts), not the head of the order.
  const takeCanary = (candidates: readonly TargetNode[], limit: number): TargetNode[] => {
    const free = candidates.filter((n) => !taken.has(n.id));
    if (limit >= free.length) return take(free, limit);
    const zones = new Map(free.map((n) => [siteKey(n.siteId), timeZoneOf(n)]));
    const selection = selectCanary({
      candidates: free,
      size: limit,
      seed,
      hardwareLabels,
      siteOpen: (siteId) =>
        isWithinMaintenanceWindow(
          siteWindows(strategy, siteId) ?? undefined,
          zones.get(siteKey(siteId)) ?? "UTC",
          now,
        ),
    });
    const byId = new Map(free.map((n) => [n.id, n]));
    canary = canaryPlan(seed, hardwareLabels, selection);
    return take(
      selection.nodeIds.map((id) => byId.get(id) as TargetNode),
      limit,
    );
  };

  const take = (candidates: readonly TargetNode[], limit: number): TargetNode[] => {
    const picked: TargetNode[] = [];
    for (const node of candidates) {
      if (picked.length >= limit) break;
      if (taken.has(node.id)) continue;
      taken.add(node.id);
      picked.push(node);
    }
    return picked;
  };

  strategy.batches.forEach((step, index) => {
    let picked: TargetNode[];
    let kind: "count" | "percent" | "selector";
    const pick = index === 0 && strategy.canary?.mode !== "ordered" ? takeCanary : take;
    if (step.count !== undefined) {
      kind = "count";
      picked = pick(order, step.count);
    } else if (step.percent !== undefined) {
      kind = "percent";
      picked = pick(order, percentOf(step.percent, total));
    } else {
      kind = "selector";
      const requirements = parseSelector(step.selector ?? "");
      const matching = order.filter((n) => matchesSelector(requirements, n.labels));
      picked = pick(matching, step.limit ? sizeOf(step.limit, matching.length) : matching.length);
    }
    if (picked.length === 0) {
      warnings.push({
        code: "empty_batch",
        batch: index,
        message: `batch ${index} gets no node: ${kind === "selector" ? "its selector matches no node that earlier batches left" : "earlier batches took every node"}`,
      });
    }
    batches.push(plannedBatch(index, { kind, step: index }, resolveBatchPolicy(strategy, index), picked));
  });
  const rest = order.filter((n) => !taken.has(n.id));
  if (rest.length > 0) {
    batches.push(plannedBatch(batches.length, { kind: "remainder" }, resolveBatchPolicy(strategy, -1), rest));
  }

  return {
    targetVersionId,
    plannedAt: now,
    totals: {
      target: input.nodes.length,
      toUpdate: total,
      alreadyCurrent: alreadyCurrent.length,
      offline: input.nodes.filter((n) => !n.online).length,
    },
    alreadyCurrent,
    batches,
    sites: plannedSites(input.nodes, targetVersionId, strategy, now),
    warnings,
    canary,
  };
}

function canaryPlan(
  seed: string,
  hardwareLabels: string[],
  selection: ReturnType<typeof selectCanary>,
): CanaryPlan {
  const { strata } = selection;
  const distinct = (values: string[]) => new Set(values).size;
  const covered = strata.filter((s) => s.picked > 0);
  return {
    seed,
    hardwareLabels,
    strata: { total: strata.length, covered: covered.length },
    sites: {
      total: distinct(strata.map((s) => siteKey(s.siteId))),
      covered: distinct(covered.map((s) => siteKey(s.siteId))),
    },
    hardware: {
      total: distinct(strata.map((s) => s.hardware)),
      covered: distinct(covered.map((s) => s.hardware)),
    },
    tiers: selection.tiers,
    closedSites: selection.closedSites,
    uncovered: strata
      .filter((s) => s.picked === 0)
      .slice(0, 20)
      .map((s) => ({ siteId: s.siteId, hardware: s.hardware, candidates: s.candidates })),
  };
}

function plannedBatch(
  index: number,
  source: PlannedBatch["source"],
  policy: BatchPolicy,
  nodes: TargetNode[],
): PlannedBatch {
  const perSite = new Map<string, PlannedBatchSite>();
  for (const node of nodes) {
    const key = siteKey(node.siteId);
    const entry = perSite.get(key) ?? { siteId: node.siteId, nodes: 0, offline: 0 };
    entry.nodes++;
    if (!node.online) entry.offline++;
    perSite.set(key, entry);
  }
  return {
    index,
    source,
    policy,
    nodeIds: nodes.map((n) => n.id),
    sites: [...perSite.values()].sort(bySiteId),
  };
}

function plannedSites(
  nodes: readonly TargetNode[],
  targetVersionId: string,
  strategy: RolloutStrategy,
  now: EpochMs,
): PlannedSite[] {
  const sites = new Map<
    string,
    { siteId: string | null; timeZone: string; target: number; toUpdate: number }
  >();
  for (const node of nodes) {
    const key = siteKey(node.siteId);
    const entry = sites.get(key) ?? {
      siteId: node.siteId,
      timeZone: timeZoneOf(node),
      target: 0,
      toUpdate: 0,
    };
    entry.target++;
    if (node.currentVersionId !== targetVersionId) entry.toUpdate++;
    sites.set(key, entry);
  }
  return [...sites.values()]
    .map((site) => {
      const windows = siteWindows(strategy, site.siteId);
      return {
        siteId: site.siteId,
        timeZone: site.timeZone,
        targetNodes: site.target,
        toUpdate: site.toUpdate,
        maxUpdating: siteUpdatingLimit(strategy, site.siteId, site.target),
        windows,
        windowNow: maintenanceWindowState(windows ?? undefined, site.timeZone, now),
      };
    })
    .sort(bySiteId);
}

/** The windows that apply to a site: its own, else the default, else none (null). */
export function siteWindows(strategy: RolloutStrategy, siteId: string | null): MaintenanceWindow[] | null {
  const own = siteId === null ? undefined : strategy.maintenanceWindows?.sites?.[siteId];
  return own ?? strategy.maintenanceWindows?.default ?? null;
}

/**
 * Most nodes of a site updating at once under both the disruption budget and the site's
 * bandwidth budget's concurrent downloads (a node downloads while it updates); null = unlimited.
 */
export function siteUpdatingLimit(
  strategy: RolloutStrategy,
  siteId: string | null,
  siteNodes: number,
): number | null {
  const disruption = siteBudget(strategy.disruptionBudget, siteId, siteNodes);
  const downloads = siteUplinkBudget(strategy, siteId).concurrentDownloads ?? null;
  if (disruption === null) return downloads;
  return downloads === null ? disruption : Math.min(disruption, downloads);
}

/** Most nodes of a site (with `siteNodes` nodes in the target) updating at once; null = unlimited. */
export function siteBudget(
  budget: DisruptionBudget | undefined,
  siteId: string | null,
  siteNodes: number,
): number | null {
  if (!budget) return null;
  const size = (siteId === null ? undefined : budget.sites?.[siteId]) ?? budget.maxUpdatingPerSite;
  if (size.count !== undefined) return size.count;
  return Math.max(1, Math.floor(roundTiny(((size.percent ?? 100) * siteNodes) / 100)));
}

/** ceil(p% of n), ignoring floating-point dust (10% of 30 is 3, not 4). */
function percentOf(percent: number, n: number): number {
  return Math.ceil(roundTiny((percent * n) / 100));
}

function sizeOf(size: Size, n: number): number {
  return size.count ?? percentOf(size.percent ?? 100, n);
}

function roundTiny(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}

function bySiteId(a: { siteId: string | null }, b: { siteId: string | null }): number {
  if (a.siteId === b.siteId) return 0;
  if (a.siteId === null) return 1;
  if (b.siteId === null) return -1;
  return a.siteId < b.siteId ? -1 : 1;
}
