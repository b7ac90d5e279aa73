import type { Observation, Recovery, TimelineSample } from "./results.js";

/** Recovery after a kill, read off the per-second timeline: pure, so it is tested on made-up timelines. */

/** What the steady state looks like: backlogs at or under these are normal traffic, not a backlog. */
export interface Normal {
  agentBacklog: number;
  ingestBacklog: number;
}

/** Normal levels from the samples before any fault: their 99th percentile, at least a floor. */
export function normalLevels(steady: readonly TimelineSample[]): Normal {
  const p99 = (values: number[]) => {
    const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
    return sorted.length === 0
      ? 0
      : (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0);
  };
  return {
    agentBacklog: Math.max(3, p99(steady.map((sample) => sample.agentBacklog[0]))),
    ingestBacklog: Math.max(10, p99(steady.flatMap((sample) => sample.ingestBacklog ?? []))),
  };
}

/**
 * Seconds from `from` until `healthy` held for good within the window: the first healthy sample
 * after the last unhealthy one. 0 if no sample was unhealthy; null if the window ends unhealthy.
 * An unknown answer (null) counts as unhealthy.
 */
export function healedAfter(
  samples: readonly TimelineSample[],
  from: number,
  healthy: (sample: TimelineSample) => boolean | null,
): number | null {
  let lastBad = -1;
  samples.forEach((sample, index) => {
    if (healthy(sample) !== true) lastBad = index;
  });
  if (lastBad === -1) return 0;
  const healed = samples[lastBad + 1];
  return healed ? Math.max(0, (healed.at - from) / 1000) : null;
}

const ok = (status: number | null) => status !== null && status >= 200 && status < 300;

/** Per signal, when it recovered after a kill at `at` (window: the samples up to the next fault). */
export function recoveryAfter(input: {
  window: readonly TimelineSample[];
  at: number;
  readyAt: number | null;
  normal: Normal;
  /** The rollout was under way (its controller must hold the lease again). */
  rolloutActive: boolean;
}): Recovery {
  const { window, at, normal } = input;
  const after = (healthy: (sample: TimelineSample) => boolean | null) => healedAfter(window, at, healthy);
  const recovery = {
    serverReady: input.readyAt === null ? null : (input.readyAt - at) / 1000,
    gatewaysReady: after((sample) => sample.gateways.every(ok)),
    consoleApi: after((sample) => sample.consoles.every(ok)),
    nodeCommands: after((sample) => sample.nodeCommands.every(ok)),
    session: after((sample) => ok(sample.session)),
    signIn: after((sample) => ok(sample.keycloak)),
    agentsDelivering: after((sample) => sample.agentBacklog[0] <= normal.agentBacklog),
    ingestCaughtUp: after((sample) =>
      sample.ingestBacklog === null ? null : sample.ingestBacklog <= normal.ingestBacklog,
    ),
    controller: input.rolloutActive ? after((sample) => sample.controllerLeasing) : null,
  };
  // A signal that does not apply (no rollout under way: no controller to wait for) is left out.
  const { controller, ...always } = recovery;
  const values = [...Object.values(always), ...(input.rolloutActive ? [controller] : [])];
  return {
    ...recovery,
    overall: values.includes(null) ? null : Math.max(...(values as number[])),
  };
}

/** Failing answers per probe in the window, counted by kind ("503", "no answer"): what users saw. */
export function failuresSeen(window: readonly TimelineSample[]): Record<string, Record<string, number>> {
  const seen: Record<string, Record<string, number>> = {};
  const note = (probe: string, status: number | null) => {
    if (ok(status)) return;
    const kind = status === null ? "no answer" : `HTTP ${status}`;
    const counts = seen[probe] ?? {};
    counts[kind] = (counts[kind] ?? 0) + 1;
    seen[probe] = counts;
  };
  for (const sample of window) {
    for (const [index, status] of sample.gateways.entries()) note(`gateway-${index + 1} /readyz`, status);
    for (const [index, status] of sample.consoles.entries()) note(`console-${index + 1} REST API`, status);
    for (const [index, status] of sample.nodeCommands.entries())
      note(`console-${index + 1} node command`, status);
    note("console-1 signed-in page data (tRPC)", sample.session);
    note("Keycloak (sign-in)", sample.keycloak);
  }
  return seen;
}

/** The first `perProbe` failing answers of each probe in [from, to), with their detail. */
export function firstObservations(
  observations: readonly Observation[],
  from: number,
  to: number,
  perProbe = 2,
): Observation[] {
  const kept: Observation[] = [];
  const count = new Map<string, number>();
  for (const observation of observations) {
    if (observation.at < from || observation.at >= to) continue;
    const seen = count.get(observation.probe) ?? 0;
    if (seen >= perProbe) continue;
    count.set(observation.probe, seen + 1);
    kept.push(observation);
  }
  return kept;
}
