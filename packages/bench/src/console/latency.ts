import { percentile } from "../stats.js";
import type { Target } from "./cases.js";

/** Latency summary of one case in one pass (milliseconds), and how it stands against its target. */

export interface CaseSummary {
  count: number;
  errors: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarizeLatencies(samples: readonly number[], errors = 0): CaseSummary | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    count: sorted.length,
    errors,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) as number,
    mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
  };
}

/** The summary's value at the target's percentile. */
export function atTarget(summary: CaseSummary, target: Target): number {
  return target.percentile === 95 ? summary.p95 : summary.p99;
}

/** Met only when measured without errors and within the target. */
export function meetsTarget(summary: CaseSummary | null, target: Target): boolean {
  return summary !== null && summary.errors === 0 && atTarget(summary, target) <= target.ms;
}

/** Value at each whole percentile 1..100 (nearest rank): the points of a distribution chart. */
export function distribution(samples: readonly number[]): Array<{ percentile: number; ms: number }> {
  if (samples.length === 0) return [];
  const sorted = [...samples].sort((a, b) => a - b);
  return Array.from({ length: 100 }, (_, i) => ({ percentile: i + 1, ms: percentile(sorted, i + 1) }));
}

/** "12 ms", "1.2 s": what a reader takes in at a glance. */
export function formatMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(0)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${Math.round(ms)} ms`;
  return `${ms.toFixed(1)} ms`;
}
