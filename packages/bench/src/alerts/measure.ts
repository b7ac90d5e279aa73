/**
 * The pure part of the alert latency benchmark: from what the driver observed (when each agent
 * stopped, when Postgres marked it offline, the first 0 of its liveness series in Mimir, the
 * webhooks that reached the receiver and the relay's outbox rows) to each node's path and the
 * summary. No I/O here: the unit test feeds it by hand.
 */
import { type LatencySummary, summarize } from "../stats.js";

/** What the receiver kept of one verified webhook (docs/alerts.md, "Webhooks"). */
export interface ReceivedWebhook {
  receivedAt: number;
  type: string;
  alert: { startsAt: string; labels: Record<string, string> };
}

export { livenessBound } from "../liveness.js";

/**
 * Each node's first firing delivery of the policy's alert. Alertmanager may group several nodes
 * into one notification and re-send a group: a node counts once, at its first arrival.
 */
export function firstFiringByNode(
  webhooks: readonly ReceivedWebhook[],
  policyId: string,
): Map<string, { deliveredAt: number; firedAt: number }> {
  const first = new Map<string, { deliveredAt: number; firedAt: number }>();
  for (const hook of [...webhooks].sort((a, b) => a.receivedAt - b.receivedAt)) {
    if (hook.type !== "alert.firing" || hook.alert.labels.policy !== policyId) continue;
    const node = hook.alert.labels.node;
    if (!node || first.has(node)) continue;
    first.set(node, { deliveredAt: hook.receivedAt, firedAt: Date.parse(hook.alert.startsAt) });
  }
  return first;
}

/** The first sample at or after `fromMs` whose value is 0, from Prometheus `[ts_seconds, "v"]` pairs. */
export function firstZeroAfter(values: ReadonlyArray<[number, string]>, fromMs: number): number | undefined {
  for (const [seconds, value] of values) {
    const at = seconds * 1000;
    if (at >= fromMs && Number(value) === 0) return at;
  }
  return undefined;
}

export interface NodePath {
  node: string;
  stoppedAt: number;
  offlineAt?: number;
  seriesZeroAt?: number;
  firedAt?: number;
  relayedAt?: number;
  deliveredAt?: number;
}

export interface StageSummaries {
  /** Agent stopped → Postgres says offline (the sweeper). */
  liveness: LatencySummary | null;
  /** Offline in Postgres → the first 0 of the node's liveness series in Mimir (the publisher). */
  series: LatencySummary | null;
  /** The first 0 → the ruler fires (the alert's startsAt), minus the policy's `for`. */
  rulerBeyondFor: LatencySummary | null;
  /** Firing → the relay's outbox row (Alertmanager's group wait, its webhook, the relay's commit). */
  alertmanagerToRelay: LatencySummary | null;
  /** Outbox row → the webhook at the receiver (delivery worker poll, HTTP). */
  delivery: LatencySummary | null;
}

export interface AlertLatencySummary {
  stopped: number;
  delivered: number;
  /** Agent stopped → webhook received. */
  total: LatencySummary | null;
  /** total − the policy's `for`. */
  beyondFor: LatencySummary | null;
  /** total − `for` − the documented liveness bound: what alerting adds once a node counts as offline. */
  beyondForAndLiveness: LatencySummary | null;
  stages: StageSummaries;
}

function between(paths: readonly NodePath[], from: keyof NodePath, to: keyof NodePath, minus = 0) {
  const samples: number[] = [];
  for (const path of paths) {
    const start = path[from];
    const end = path[to];
    if (typeof start === "number" && typeof end === "number") samples.push(end - start - minus);
  }
  return summarize(samples);
}

export function summarizePaths(
  paths: readonly NodePath[],
  forMs: number,
  livenessBoundMs: number,
): AlertLatencySummary {
  return {
    stopped: paths.length,
    delivered: paths.filter((path) => path.deliveredAt !== undefined).length,
    total: between(paths, "stoppedAt", "deliveredAt"),
    beyondFor: between(paths, "stoppedAt", "deliveredAt", forMs),
    beyondForAndLiveness: between(paths, "stoppedAt", "deliveredAt", forMs + livenessBoundMs),
    stages: {
      liveness: between(paths, "stoppedAt", "offlineAt"),
      series: between(paths, "offlineAt", "seriesZeroAt"),
      rulerBeyondFor: between(paths, "seriesZeroAt", "firedAt", forMs),
      alertmanagerToRelay: between(paths, "firedAt", "relayedAt"),
      delivery: between(paths, "relayedAt", "deliveredAt"),
    },
  };
}

/** The distinct `group_wait`s of an Alertmanager config (YAML text), e.g. "0s" or "10s, 30s". */
export function groupWaits(config: string): string {
  const waits = new Set([...config.matchAll(/group_wait:\s*"?([0-9a-z.]+)/g)].map((match) => match[1]));
  return waits.size === 0 ? "Alertmanager's default (30s)" : [...waits].join(", ");
}
