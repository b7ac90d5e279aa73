/**
 * The judge: pure. Given one gate's per-node values for the canary (the batch's nodes, on the new
 * version) and the baseline (comparable nodes still on the old one), it says pass, fail,
 * inconclusive or no data, with the numbers that decided it; then a batch's outcome from its
 * gates' verdicts. Semantics: README.md of this package, "Metric gates".
 */
import { mean, median } from "simple-statistics";
import { type Alternative, mannWhitneyU } from "./mann-whitney";
import type { CompareCriterion, Gate, ThresholdCriterion } from "./spec";

/** One node's value of a gate's metric over the window. */
export interface NodeSample {
  nodeId: string;
  value: number;
}

export type GateOutcome = "pass" | "fail" | "inconclusive" | "no_data";
export type BatchGateOutcome = "pass" | "fail" | "inconclusive";

export interface CohortSummary {
  nodes: number;
  median: number | null;
  mean: number | null;
  min: number | null;
  max: number | null;
}

export interface GateVerdict {
  gate: string;
  critical: boolean;
  outcome: GateOutcome;
  /** One sentence with the numbers, for the rollout page and events. */
  reason: string;
  canary: CohortSummary;
  baseline: CohortSummary;
  threshold?: { min: number | null; max: number | null; breaching: string[]; failureLimit: number };
  compare?: {
    worse: CompareCriterion["worse"];
    u: number;
    z: number;
    pValue: number;
    /** 1 − confidence: a p-value below it is a significant difference. */
    alpha: number;
    /** Canary median − baseline median. */
    delta: number;
    /** delta ÷ |baseline median|; null when the baseline median is 0. */
    relativeDelta: number | null;
    tolerance: number;
    minDelta: number;
  };
}

export function summarize(values: readonly number[]): CohortSummary {
  if (values.length === 0) return { nodes: 0, median: null, mean: null, min: null, max: null };
  return {
    nodes: values.length,
    median: median([...values]),
    mean: mean([...values]),
    min: Math.min(...values),
    max: Math.max(...values),
  };
}

const finiteValues = (samples: readonly NodeSample[]) =>
  samples.map((s) => s.value).filter((v) => Number.isFinite(v));

const fmt = (value: number | null) =>
  value === null
    ? "—"
    : Math.abs(value) >= 1000 || value === 0
      ? String(Math.round(value * 1000) / 1000)
      : value.toPrecision(3);

export function judgeGate(
  gate: Gate,
  canary: readonly NodeSample[],
  baseline: readonly NodeSample[],
): GateVerdict {
  const canaryValues = finiteValues(canary);
  const baselineValues = finiteValues(baseline);
  const base = {
    gate: gate.name,
    critical: gate.critical,
    canary: summarize(canaryValues),
    baseline: summarize(baselineValues),
  };
  if (gate.criterion.kind === "threshold") return judgeThreshold(base, gate.criterion, canary);
  return judgeCompare(base, gate.criterion, canaryValues, baselineValues);
}

type VerdictBase = Pick<GateVerdict, "gate" | "critical" | "canary" | "baseline">;

function judgeThreshold(
  base: VerdictBase,
  criterion: ThresholdCriterion,
  canary: readonly NodeSample[],
): GateVerdict {
  const min = criterion.min ?? null;
  const max = criterion.max ?? null;
  const samples = canary.filter((s) => Number.isFinite(s.value));
  const breaching = samples
    .filter((s) => (max !== null && s.value > max) || (min !== null && s.value < min))
    .map((s) => s.nodeId)
    .sort();
  const threshold = { min, max, breaching, failureLimit: criterion.failureLimit };
  const bounds = [min !== null ? `≥ ${fmt(min)}` : null, max !== null ? `≤ ${fmt(max)}` : null]
    .filter(Boolean)
    .join(" and ");
  if (samples.length === 0) {
    return { ...base, threshold, outcome: "no_data", reason: "no data for the batch's nodes in the window" };
  }
  const detail = `${breaching.length} of ${samples.length} nodes outside ${bounds} (at most ${criterion.failureLimit} allowed; median ${fmt(base.canary.median)})`;
  if (breaching.length > criterion.failureLimit)
    return { ...base, threshold, outcome: "fail", reason: detail };
  return { ...base, threshold, outcome: "pass", reason: detail };
}

function judgeCompare(
  base: VerdictBase,
  criterion: CompareCriterion,
  canary: readonly number[],
  baseline: readonly number[],
): GateVerdict {
  if (canary.length === 0 || baseline.length === 0) {
    const missing = canary.length === 0 ? "the batch's nodes" : "the baseline";
    return { ...base, outcome: "no_data", reason: `no data for ${missing} in the window` };
  }
  const alternative: Alternative =
    criterion.worse === "higher" ? "greater" : criterion.worse === "lower" ? "less" : "two-sided";
  const test = mannWhitneyU(canary, baseline, alternative);
  const canaryMedian = base.canary.median as number;
  const baselineMedian = base.baseline.median as number;
  const delta = canaryMedian - baselineMedian;
  const relativeDelta = baselineMedian === 0 ? null : delta / Math.abs(baselineMedian);
  const alpha = 1 - criterion.confidence;
  const compare = {
    worse: criterion.worse,
    u: test.u,
    z: test.z,
    pValue: test.pValue,
    alpha,
    delta,
    relativeDelta,
    tolerance: criterion.tolerance,
    minDelta: criterion.minDelta,
  };
  const summary =
    `canary median ${fmt(canaryMedian)} vs baseline ${fmt(baselineMedian)} ` +
    `(${relativeDelta === null ? `Δ ${fmt(delta)}` : `${relativeDelta >= 0 ? "+" : ""}${(relativeDelta * 100).toFixed(1)} %`}, ` +
    `p = ${test.pValue.toPrecision(2)}, ${canary.length} vs ${baseline.length} nodes)`;
  if (canary.length < criterion.minNodes || baseline.length < criterion.minNodes) {
    return {
      ...base,
      compare,
      outcome: "inconclusive",
      reason: `too few nodes to compare (${criterion.minNodes} needed in each cohort): ${summary}`,
    };
  }
  const inWorseDirection =
    criterion.worse === "higher" ? delta > 0 : criterion.worse === "lower" ? delta < 0 : delta !== 0;
  // Beyond the tolerance: relative to the baseline's median, or any change from a zero baseline.
  const beyondTolerance =
    relativeDelta === null ? delta !== 0 : Math.abs(relativeDelta) > criterion.tolerance;
  const significant = test.pValue < alpha;
  if (significant && inWorseDirection && beyondTolerance && Math.abs(delta) > criterion.minDelta) {
    return { ...base, compare, outcome: "fail", reason: `worse than the baseline: ${summary}` };
  }
  return {
    ...base,
    compare,
    outcome: "pass",
    reason: `not worse than the baseline beyond the tolerance: ${summary}`,
  };
}

/**
 * A batch's outcome from its gates: `fail` when a critical gate fails; otherwise `inconclusive`
 * when any gate fails (not critical), has no data or is inconclusive — a person looks, never a
 * silent pass; `pass` when every gate passes.
 */
export function judgeBatch(verdicts: readonly GateVerdict[]): { outcome: BatchGateOutcome; reason: string } {
  const describe = (v: GateVerdict) =>
    `${v.critical ? "critical gate" : "gate"} ${v.gate}: ${v.outcome.replace("_", " ")} — ${v.reason}`;
  const failedCritical = verdicts.filter((v) => v.critical && v.outcome === "fail");
  if (failedCritical.length > 0) return { outcome: "fail", reason: failedCritical.map(describe).join("; ") };
  const other = verdicts.filter((v) => v.outcome !== "pass");
  if (other.length > 0) return { outcome: "inconclusive", reason: other.map(describe).join("; ") };
  return {
    outcome: "pass",
    reason: verdicts.length === 0 ? "no gates" : `${verdicts.length} gate(s) passed`,
  };
}
