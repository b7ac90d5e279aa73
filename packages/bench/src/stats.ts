/** Summary statistics of latency samples (milliseconds). */

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/**
 * Percentile by the nearest-rank method on sorted values (p in [0, 100]): the smallest sample
 * such that at least p % of the samples are ≤ it. Always one of the samples, never interpolated.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError("percentile of no samples");
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

export function summarize(samples: readonly number[]): LatencySummary | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) as number,
  };
}

/** Rate of events per second over the span from the first to the last timestamp (ms). */
export function ratePerSecond(timestampsMs: readonly number[]): number {
  if (timestampsMs.length < 2) return 0;
  const first = Math.min(...timestampsMs);
  const last = Math.max(...timestampsMs);
  return last === first ? 0 : ((timestampsMs.length - 1) * 1000) / (last - first);
}

/**
 * Cumulative count over time, one point per bucket: for a chart of "how many by second s".
 * Times are relative to `startMs`, bucketed to `bucketMs`.
 */
export function cumulativeSeries(
  timestampsMs: readonly number[],
  startMs: number,
  bucketMs = 1000,
): Array<{ seconds: number; count: number }> {
  if (timestampsMs.length === 0) return [];
  const buckets = new Map<number, number>();
  for (const t of timestampsMs) {
    const bucket = Math.max(0, Math.ceil((t - startMs) / bucketMs));
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
  }
  const last = Math.max(...buckets.keys());
  const series: Array<{ seconds: number; count: number }> = [];
  let count = 0;
  for (let bucket = 0; bucket <= last; bucket++) {
    count += buckets.get(bucket) ?? 0;
    series.push({ seconds: (bucket * bucketMs) / 1000, count });
  }
  return series;
}

/** Evenly spread sample of `count` items (deterministic: every k-th), for stop/restart samples. */
export function spreadSample<T>(items: readonly T[], count: number): T[] {
  if (count >= items.length) return [...items];
  if (count <= 0) return [];
  const step = items.length / count;
  return Array.from({ length: count }, (_, i) => items[Math.floor(i * step)] as T);
}

/** Idle uplink per node: bytes a minute, and the same as kbit/s. */
export function uplinkPerNode(totalBytes: number, nodes: number, windowMs: number) {
  if (nodes <= 0 || windowMs <= 0) throw new RangeError("uplink needs nodes > 0 and a window > 0");
  const bytesPerMinute = (totalBytes / nodes) * (60_000 / windowMs);
  return { bytesPerMinute, kbitPerSecond: (bytesPerMinute * 8) / 60 / 1000 };
}
