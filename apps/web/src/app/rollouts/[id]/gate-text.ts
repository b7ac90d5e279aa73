/** Metric gates in words: outcomes, their colours, what they make the rollout do, a gate's spec. */

/** A gate as the plan froze it (@edgefleet/rollout's Gate, defaults filled in). */
export interface GateSpec {
  name: string;
  metric: { preset: string } | { promql: string };
  windowSeconds: number;
  criterion:
    | { kind: "threshold"; max?: number; min?: number; failureLimit: number }
    | {
        kind: "compare";
        worse: string;
        tolerance: number;
        minDelta: number;
        confidence: number;
        minNodes: number;
      };
  critical: boolean;
}

type Variant = "online" | "destructive" | "pending" | "secondary";

export function gateOutcome(outcome: string): { label: string; variant: Variant } {
  switch (outcome) {
    case "pass":
      return { label: "pass", variant: "online" };
    case "fail":
      return { label: "fail", variant: "destructive" };
    case "no_data":
      return { label: "no data", variant: "secondary" };
    default:
      return { label: outcome.replace(/_/g, " "), variant: "pending" };
  }
}

/** What a batch's gate outcome made the rollout do (the strategy's gateActions). */
export function outcomeEffect(
  outcome: "pass" | "fail" | "inconclusive",
  actions: { onFail: string; onInconclusive: string },
): string {
  const action =
    outcome === "pass" ? "continue" : outcome === "fail" ? actions.onFail : actions.onInconclusive;
  switch (action) {
    case "rollback":
      return "rolls back";
    case "pause":
      return "halts until a person decides";
    default:
      return "goes on";
  }
}

export function gateSpecText(spec: GateSpec): string {
  const metric = "promql" in spec.metric ? `PromQL ${spec.metric.promql}` : spec.metric.preset;
  const c = spec.criterion;
  const criterion =
    c.kind === "threshold"
      ? `every canary node ${[c.min !== undefined ? `≥ ${c.min}` : "", c.max !== undefined ? `≤ ${c.max}` : ""].filter(Boolean).join(" and ")}, ${c.failureLimit} outside allowed`
      : `canary not worse (${c.worse}) than baseline by more than ${Math.round(c.tolerance * 1000) / 10}% at ${c.confidence * 100}% confidence, at least ${c.minNodes} nodes each`;
  return `${metric} over ${spec.windowSeconds} s: ${criterion}`;
}
