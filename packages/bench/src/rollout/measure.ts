import type { ComponentSample } from "../proc.js";
import { type LatencySummary, summarize } from "../stats.js";
import type { FinalInstance, RolloutFact } from "./instrumentation.js";

/** Pure arithmetic of the rollout benchmark: facts from Postgres and the agents in, numbers out. */

export interface BatchMeasurement {
  /** Plan batch index (0-based); null: dispatched outside the plan (late joiners). */
  batch: number | null;
  /** Nodes dispatched to the version in this batch. */
  nodes: number;
  /** Controller steps (transactions) that dispatched them. */
  steps: number;
  /** Longest of those steps, from its transaction's start to its last write, ms. */
  commitMs: number;
  /** First dispatch of the batch, seconds after the rollout was started. */
  dispatchedAtSeconds: number;
  /** Per node: its step's last write → running on the version (Postgres times). */
  toRunning: LatencySummary | null;
  /** Dispatched nodes never seen running on the version. */
  notRunning: number;
  /** Last node of the batch running, seconds after the rollout was started; null if some never ran. */
  allRunningSeconds: number | null;
}

/** Per transaction (by its start time): the time of its last write. */
export function stepEnds(facts: readonly RolloutFact[]): Map<number, number> {
  const ends = new Map<number, number>();
  for (const fact of facts) {
    if (fact.kind === "running") continue;
    ends.set(fact.txStart, Math.max(ends.get(fact.txStart) ?? fact.at, fact.at));
  }
  return ends;
}

/** First time each node ran `versionId` at or after `fromMs` (rounding: Postgres µs vs our ms). */
function firstRunning(facts: readonly RolloutFact[], versionId: string): Map<string, number[]> {
  const byNode = new Map<string, number[]>();
  for (const fact of facts) {
    if (fact.kind !== "running" || fact.versionId !== versionId) continue;
    const list = byNode.get(fact.nid) ?? [];
    list.push(fact.at);
    byNode.set(fact.nid, list);
  }
  return byNode;
}

/**
 * Per batch: how long the step that committed it took, and each node's dispatch-to-running latency
 * from the moment that step had written everything (its commit follows within milliseconds; the
 * agents cannot see the desired state earlier). Dispatches to other versions are ignored.
 */
export function measureBatches(
  facts: readonly RolloutFact[],
  versionId: string,
  startMs: number,
): BatchMeasurement[] {
  const ends = stepEnds(facts);
  const running = firstRunning(facts, versionId);
  const groups = new Map<number | null, RolloutFact[]>();
  for (const fact of facts) {
    if (fact.kind !== "dispatch" || fact.versionId !== versionId) continue;
    const list = groups.get(fact.batch) ?? [];
    list.push(fact);
    groups.set(fact.batch, list);
  }
  const order = [...groups.keys()].sort(
    (a, b) => (a ?? Number.MAX_SAFE_INTEGER) - (b ?? Number.MAX_SAFE_INTEGER),
  );
  return order.map((batch) => {
    const dispatches = groups.get(batch) ?? [];
    const steps = new Set(dispatches.map((fact) => fact.txStart));
    const latencies: number[] = [];
    let lastRunning = Number.NEGATIVE_INFINITY;
    let notRunning = 0;
    for (const dispatch of dispatches) {
      const committedAt = ends.get(dispatch.txStart) ?? dispatch.at;
      const ranAt = (running.get(dispatch.nid) ?? []).find((at) => at >= committedAt - 1);
      if (ranAt === undefined) {
        notRunning++;
        continue;
      }
      latencies.push(Math.max(0, ranAt - committedAt));
      lastRunning = Math.max(lastRunning, ranAt);
    }
    return {
      batch,
      nodes: dispatches.length,
      steps: steps.size,
      commitMs: Math.max(...[...steps].map((txStart) => (ends.get(txStart) ?? txStart) - txStart)),
      dispatchedAtSeconds: (Math.min(...dispatches.map((fact) => fact.txStart)) - startMs) / 1000,
      toRunning: summarize(latencies),
      notRunning,
      allRunningSeconds: notRunning === 0 && latencies.length > 0 ? (lastRunning - startMs) / 1000 : null,
    };
  });
}

/** Every node's dispatch-to-running latency of the run, all batches together. */
export function allLatencies(facts: readonly RolloutFact[], versionId: string): number[] {
  const ends = stepEnds(facts);
  const running = firstRunning(facts, versionId);
  const latencies: number[] = [];
  for (const fact of facts) {
    if (fact.kind !== "dispatch" || fact.versionId !== versionId) continue;
    const committedAt = ends.get(fact.txStart) ?? fact.at;
    const ranAt = (running.get(fact.nid) ?? []).find((at) => at >= committedAt - 1);
    if (ranAt !== undefined) latencies.push(Math.max(0, ranAt - committedAt));
  }
  return latencies;
}

export interface UpdatedTwice {
  /** Nodes updated more than once to the version, by any of the three witnesses. */
  nodes: number;
  /** … dispatched twice by the controller (rollout_node got a second dispatch time). */
  byDispatch: number;
  /** … whose desired version was set to it twice (two commits). */
  byDesired: number;
  /** … whose agent was told twice to switch to it (the hollow runtime's own count). */
  byAgent: number;
  /** A few of them, for the log. */
  examples: string[];
}

/**
 * Nodes updated twice: three independent witnesses (the controller's dispatch rows, the desired
 * state commits, the agents' runtimes), so a double update is seen whichever layer repeats it.
 */
export function updatedTwice(
  facts: readonly RolloutFact[],
  versionId: string,
  agentSwitches: ReadonlyArray<{ nid: string; switches: Readonly<Record<string, number>> }>,
  versionLabel: string,
): UpdatedTwice {
  const count = (kind: RolloutFact["kind"]) => {
    const counts = new Map<string, number>();
    for (const fact of facts)
      if (fact.kind === kind && fact.versionId === versionId)
        counts.set(fact.nid, (counts.get(fact.nid) ?? 0) + 1);
    return new Set([...counts].filter(([, n]) => n > 1).map(([nid]) => nid));
  };
  const byDispatch = count("dispatch");
  const byDesired = count("desired");
  const byAgent = new Set(
    agentSwitches.filter((node) => (node.switches[versionLabel] ?? 0) > 1).map((node) => node.nid),
  );
  const all = new Set([...byDispatch, ...byDesired, ...byAgent]);
  return {
    nodes: all.size,
    byDispatch: byDispatch.size,
    byDesired: byDesired.size,
    byAgent: byAgent.size,
    examples: [...all].slice(0, 5),
  };
}

/** Target nodes not running the version at the end (no instance, another version, not running). */
export function leftBehind(
  targetNids: readonly string[],
  instances: readonly FinalInstance[],
  versionId: string,
): string[] {
  const byNode = new Map(instances.map((instance) => [instance.nid, instance]));
  return targetNids.filter((nid) => {
    const instance = byNode.get(nid);
    return instance?.state !== "running" || instance.observedVersionId !== versionId;
  });
}

/** Cumulative nodes running the version over time (seconds after `startMs`), one point a second. */
export function runningSeries(
  facts: readonly RolloutFact[],
  versionId: string,
  startMs: number,
): Array<{ seconds: number; count: number }> {
  const first = new Map<string, number>();
  for (const fact of facts)
    if (fact.kind === "running" && fact.versionId === versionId && !first.has(fact.nid))
      first.set(fact.nid, fact.at);
  const buckets = new Map<number, number>();
  for (const at of first.values()) {
    const second = Math.max(0, Math.ceil((at - startMs) / 1000));
    buckets.set(second, (buckets.get(second) ?? 0) + 1);
  }
  if (buckets.size === 0) return [];
  const series: Array<{ seconds: number; count: number }> = [];
  let count = 0;
  for (let second = 0; second <= Math.max(...buckets.keys()); second++) {
    count += buckets.get(second) ?? 0;
    series.push({ seconds: second, count });
  }
  return series;
}

/**
 * CPU-seconds a component used in [fromMs, toMs], from the sampler's interval samples (each
 * sample covers the interval before its time; partly covered intervals count in proportion).
 */
export function cpuSecondsBetween(
  samples: readonly ComponentSample[],
  component: string,
  fromMs: number,
  toMs: number,
): number {
  const mine = samples.filter((sample) => sample.component === component).sort((a, b) => a.at - b.at);
  let seconds = 0;
  for (let i = 1; i < mine.length; i++) {
    const previous = mine[i - 1] as ComponentSample;
    const sample = mine[i] as ComponentSample;
    const overlap = Math.min(sample.at, toMs) - Math.max(previous.at, fromMs);
    if (overlap <= 0) continue;
    seconds += ((sample.cpuPercent / 100) * overlap) / 1000;
  }
  return seconds;
}
