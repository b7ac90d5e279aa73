import type { ComponentSample } from "../proc.js";

/** Pure arithmetic of the scale scenario: cost per node, memory slopes, SLO verdicts. */

/** The control plane as the issue counts it: nats-server (hub), gateway and Postgres. Mimir apart. */
export const CONTROL_PLANE = ["nats-server (hub)", "gateway", "postgres"] as const;

/** flightctl's figures (issue 16): its own simulator, 10,000 devices, this machine kind. */
export const FLIGHTCTL = { cpuMsPerNodePerMinute: 0.81, memoryKiBPerNode: 183 } as const;

export const TARGETS = {
  apiP99Ms: 1_000,
  desiredToRunningP99Ms: 5_000,
  connectToOnlineP99Ms: 5_000,
  resyncSeconds: 60,
  fullLists: 0,
  uplinkKbitPerSecond: 0.05,
  cpuMsPerNodePerMinute: 0.4,
  memoryKiBPerNode: 18,
} as const;

export interface ComponentCost {
  component: string;
  /** Mean CPU over the window, percent of one core. */
  cpuPercent: number;
  /** Mean PSS over the window, MiB. */
  pssMiB: number;
  /** Mean PSS before any node existed, MiB (what the component costs with no fleet). */
  baselinePssMiB: number;
}

export interface CostPerNode {
  nodes: number;
  components: ComponentCost[];
  /** Control plane (CONTROL_PLANE), CPU-ms a minute per node. */
  cpuMsPerNodePerMinute: number;
  /** Control plane, PSS above the no-fleet baseline, per node. */
  memoryKiBPerNode: number;
  /** The same, all memory the control plane holds (baseline included), per node. */
  memoryKiBPerNodeTotal: number;
}

const mean = (values: readonly number[]) =>
  values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;

/** Mean CPU and PSS per component over the samples of `phase` (baseline from `baselinePhase`). */
export function componentCosts(
  samples: readonly ComponentSample[],
  phase: string,
  baselinePhase: string,
): ComponentCost[] {
  const components = [...new Set(samples.map((sample) => sample.component))];
  return components.flatMap((component) => {
    const inPhase = samples.filter((s) => s.component === component && s.phase === phase);
    if (inPhase.length === 0) return [];
    const baseline = samples.filter((s) => s.component === component && s.phase === baselinePhase);
    return [
      {
        component,
        cpuPercent: mean(inPhase.map((s) => s.cpuPercent)),
        pssMiB: mean(inPhase.map((s) => s.pssMiB)),
        baselinePssMiB: mean(baseline.map((s) => s.pssMiB)),
      },
    ];
  });
}

/** CPU-ms/min and KiB per node of the control plane (percent of a core → ms a minute: × 600). */
export function costPerNode(components: readonly ComponentCost[], nodes: number): CostPerNode {
  if (nodes <= 0) throw new RangeError("cost per node needs nodes > 0");
  const controlPlane = components.filter((c) => (CONTROL_PLANE as readonly string[]).includes(c.component));
  const cpuPercent = controlPlane.reduce((sum, c) => sum + c.cpuPercent, 0);
  const pssMiB = controlPlane.reduce((sum, c) => sum + c.pssMiB, 0);
  const baselineMiB = controlPlane.reduce((sum, c) => sum + c.baselinePssMiB, 0);
  return {
    nodes,
    components: [...components],
    cpuMsPerNodePerMinute: (cpuPercent * 600) / nodes,
    memoryKiBPerNode: (Math.max(0, pssMiB - baselineMiB) * 1024) / nodes,
    memoryKiBPerNodeTotal: (pssMiB * 1024) / nodes,
  };
}

/** Least-squares slope of y over x; 0 with fewer than two distinct x. */
export function slope(points: ReadonlyArray<{ x: number; y: number }>): number {
  if (points.length < 2) return 0;
  const mx = mean(points.map((p) => p.x));
  const my = mean(points.map((p) => p.y));
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Memory slope per component over a phase, MiB per hour (churn must not grow memory). */
export function memorySlopes(
  samples: readonly ComponentSample[],
  phase: string,
): Array<{ component: string; pssMiBPerHour: number; minutes: number }> {
  const components = [...new Set(samples.map((sample) => sample.component))];
  return components.flatMap((component) => {
    const inPhase = samples.filter((s) => s.component === component && s.phase === phase);
    if (inPhase.length < 2) return [];
    const first = (inPhase[0] as ComponentSample).at;
    const last = (inPhase.at(-1) as ComponentSample).at;
    return [
      {
        component,
        pssMiBPerHour: slope(inPhase.map((s) => ({ x: (s.at - first) / 3_600_000, y: s.pssMiB }))),
        minutes: (last - first) / 60_000,
      },
    ];
  });
}

export type Verdict = "met" | "missed" | "not measured";

export function verdict(value: number | null | undefined, target: number): Verdict {
  if (value === null || value === undefined || Number.isNaN(value)) return "not measured";
  return value <= target ? "met" : "missed";
}

/** Node index from a hollow node's name (`<prefix>-<index>`), for its site. */
export function nodeIndexOf(name: string): number {
  const index = Number(/-(\d+)$/.exec(name)?.[1]);
  if (!Number.isInteger(index)) throw new Error(`not a hollow node name: ${name}`);
  return index;
}

export interface PhaseCpu {
  phase: string;
  /** Mean CPU per component over the phase, percent of one core. */
  byComponent: Record<string, number>;
  /** Sum over the components: how busy the machine was (cores × 100 % is all of it). */
  totalPercent: number;
  /** totalPercent over the machine's capacity, 0..1 (above 1: the sampler's rounding). */
  machineShare: number;
}

/**
 * CPU by phase, in the order the phases ran: what explains a latency SLO missed in one phase is
 * often not the control plane's own cost but a machine with no core left (the edge side, leaves
 * and generators, runs on the same 2 cores here and on other boxes in production).
 */
export function cpuByPhase(
  usage: readonly { component: string; phase: string; cpuPercentMean: number }[],
  cores: number,
): PhaseCpu[] {
  const phases = new Map<string, Record<string, number>>();
  for (const row of usage) {
    const byComponent = phases.get(row.phase) ?? {};
    byComponent[row.component] = row.cpuPercentMean;
    phases.set(row.phase, byComponent);
  }
  return [...phases].map(([phase, byComponent]) => {
    const totalPercent = Object.values(byComponent).reduce((sum, value) => sum + value, 0);
    return { phase, byComponent, totalPercent, machineShare: totalPercent / (Math.max(1, cores) * 100) };
  });
}

/**
 * The nodes one churn cycle stops: `count` of them, as many from every site as the count allows
 * (round robin over the sites, each site's own nodes spread), a different set each cycle. A spread
 * over the whole list took every 100th node of 20,000, and node i lives on site i mod 10: the
 * whole sample came from one site (the one just restarted, as it happened).
 */
export function churnSample<T>(
  nodes: readonly T[],
  siteOf: (node: T) => number,
  count: number,
  cycle: number,
): T[] {
  const bySite = new Map<number, T[]>();
  for (const node of nodes) {
    const site = siteOf(node);
    const list = bySite.get(site) ?? [];
    list.push(node);
    bySite.set(site, list);
  }
  const sites = [...bySite.keys()].sort((a, b) => a - b);
  const perSite = sites.map((site) => {
    const list = bySite.get(site) ?? [];
    const want = Math.ceil(count / Math.max(1, sites.length));
    const step = Math.max(1, Math.floor(list.length / Math.max(1, want)));
    // A different offset within each stride every cycle.
    return Array.from(
      { length: Math.min(want, list.length) },
      (_, i) => list[(i * step + cycle) % list.length] as T,
    );
  });
  const picked: T[] = [];
  const longest = Math.max(0, ...perSite.map((list) => list.length));
  for (let i = 0; i < longest && picked.length < count; i++)
    for (const list of perSite) {
      if (picked.length >= count) break;
      const node = list[i];
      if (node !== undefined && !picked.includes(node)) picked.push(node);
    }
  return picked;
}
