/**
 * Metric gates (issue 11): what a batch is judged on once its nodes run the new version. A gate
 * names a metric (a preset or the operator's PromQL), a window, and a criterion: an absolute
 * threshold (Argo Rollouts' successCondition/failureLimit) or a comparison of the batch's nodes
 * (canary) against comparable nodes still on the old version (baseline; Kayenta's judge).
 * Semantics for users: README.md of this package, "Metric gates".
 */
import { z } from "zod";

export const MIN_GATE_WINDOW_SECONDS = 10;
export const MAX_GATE_WINDOW_SECONDS = 24 * 3600;
export const MAX_PROMQL_LENGTH = 2_000;

/**
 * The presets: one PromQL expression each, giving one value per node over the window. `perApp`:
 * the series are the rolled-out app's (labels `app` and `version`, see docs/protocol.md).
 */
export const GATE_PRESETS = {
  app_cpu: { title: "App CPU (share of one core)", unit: "ratio", perApp: true },
  app_memory: { title: "App memory", unit: "bytes", perApp: true },
  app_restarts: { title: "App restarts in the window", unit: "count", perApp: true },
  node_cpu: { title: "Node CPU (share of all cores)", unit: "ratio", perApp: false },
  node_memory: { title: "Node memory used", unit: "bytes", perApp: false },
  node_bytes_up: { title: "Bytes sent per node in the window", unit: "bytes", perApp: false },
  node_bytes_down: { title: "Bytes received per node in the window", unit: "bytes", perApp: false },
  hub_rtt: { title: "Round-trip time to the hub", unit: "seconds", perApp: false },
} as const;
export type GatePreset = keyof typeof GATE_PRESETS;
export const GATE_PRESET_NAMES = Object.keys(GATE_PRESETS) as [GatePreset, ...GatePreset[]];

/** A preset, or PromQL giving one value per node (a `node` label); `$window` is the window. */
export const gateMetricSchema = z.union(
  [
    z.strictObject({ preset: z.enum(GATE_PRESET_NAMES) }),
    z.strictObject({
      promql: z
        .string()
        .trim()
        .min(1, "must not be empty")
        .max(MAX_PROMQL_LENGTH, `must be at most ${MAX_PROMQL_LENGTH} characters`),
    }),
  ],
  { error: `must be { preset: ${GATE_PRESET_NAMES.join(" | ")} } or { promql: "…" }` },
);
export type GateMetric = z.output<typeof gateMetricSchema>;

/**
 * Absolute: every canary node's value must lie within [min, max]; more than `failureLimit`
 * nodes outside fails the gate.
 */
export const thresholdCriterionSchema = z
  .strictObject({
    kind: z.literal("threshold"),
    max: z.number().optional(),
    min: z.number().optional(),
    failureLimit: z.int().min(0, "must be at least 0").default(0),
  })
  .superRefine((c, ctx) => {
    if (c.max === undefined && c.min === undefined)
      ctx.addIssue({ code: "custom", path: ["max"], message: "give max, min or both" });
    if (c.max !== undefined && c.min !== undefined && c.min > c.max)
      ctx.addIssue({ code: "custom", path: ["min"], message: "must not be greater than max" });
  });

/**
 * Canary against baseline: Mann–Whitney U on the per-node values. The gate fails when the canary
 * is worse (in direction `worse`) with the given confidence AND by more than `tolerance` (relative
 * to the baseline's median) AND by more than `minDelta` (absolute, so that tiny values' noise
 * never fails a gate). Fewer than `minNodes` nodes in either cohort: inconclusive.
 */
export const compareCriterionSchema = z.strictObject({
  kind: z.literal("compare"),
  worse: z.enum(["higher", "lower", "either"]).default("higher"),
  tolerance: z.number().min(0, "must be at least 0").max(100).default(0.1),
  minDelta: z.number().min(0, "must be at least 0").default(0),
  confidence: z.number().min(0.5, "must be at least 0.5").max(0.9999, "must be at most 0.9999").default(0.99),
  minNodes: z.int().min(1, "must be at least 1").max(10_000).default(3),
});

export const gateCriterionSchema = z.discriminatedUnion(
  "kind",
  [thresholdCriterionSchema, compareCriterionSchema],
  {
    error: 'kind must be "threshold" or "compare"',
  },
);
export type GateCriterion = z.output<typeof gateCriterionSchema>;
export type ThresholdCriterion = z.output<typeof thresholdCriterionSchema>;
export type CompareCriterion = z.output<typeof compareCriterionSchema>;

export const gateSchema = z.strictObject({
  /** Identifies the gate in verdicts; unique within a batch. */
  name: z
    .string()
    .min(1, "must not be empty")
    .max(63)
    .regex(/^[a-z0-9][a-z0-9_-]*$/, "lowercase letters, digits, - and _, starting with a letter or digit"),
  metric: gateMetricSchema,
  /** Seconds of data judged, from the moment every node of the batch runs the version. */
  windowSeconds: z.int().min(MIN_GATE_WINDOW_SECONDS).max(MAX_GATE_WINDOW_SECONDS).default(300),
  criterion: gateCriterionSchema,
  /** A critical gate's failure fails the batch; any other gate's failure makes it inconclusive. */
  critical: z.boolean().default(false),
});
export type Gate = z.output<typeof gateSchema>;

/** What the rollout does with a batch's gate outcome (`pass` always continues). */
export const gateActionsSchema = z.strictObject({
  onFail: z.enum(["rollback", "pause"]).default("rollback"),
  onInconclusive: z.enum(["pause", "continue", "rollback"]).default("pause"),
});
export type GateActions = z.output<typeof gateActionsSchema>;
export const DEFAULT_GATE_ACTIONS: GateActions = { onFail: "rollback", onInconclusive: "pause" };

/** The longest window of a set of gates: how long a batch is watched. */
export function gateWindowSeconds(gates: readonly Gate[]): number {
  return gates.reduce((longest, gate) => Math.max(longest, gate.windowSeconds), 0);
}

/** A strategy's gate actions, defaults filled in (strategies stored before gates have none). */
export function gateActionsOf(strategy: { gateActions?: GateActions | undefined }): GateActions {
  return strategy.gateActions ?? DEFAULT_GATE_ACTIONS;
}
