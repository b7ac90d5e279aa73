/** Builders for rollout tests: nodes, strategies, started rollouts. */
import {
  applyAction,
  newRolloutState,
  type ObservedNode,
  type RolloutState,
  type RolloutStrategyInput,
  rolloutStrategySchema,
  type TargetNode,
} from "../src";

export const OLD = "v1";
export const NEW = "v2";
/** Monday 2025-06-02 10:00 UTC. */
export const T0 = Date.UTC(2025, 5, 2, 10, 0);

export function node(id: string, overrides: Partial<TargetNode> = {}): TargetNode {
  return {
    id,
    name: id,
    siteId: "site-a",
    siteTimeZone: "UTC",
    labels: {},
    online: true,
    currentVersionId: OLD,
    ...overrides,
  };
}

/** `count` nodes n000.. spread round-robin over `sites`. */
export function nodes(count: number, sites: (string | null)[] = ["site-a"]): TargetNode[] {
  return Array.from({ length: count }, (_, i) =>
    node(`n${String(i).padStart(3, "0")}`, { siteId: sites[i % sites.length] ?? null }),
  );
}

export function observe(target: TargetNode, overrides: Partial<ObservedNode> = {}): ObservedNode {
  return { ...target, inTarget: true, instance: null, ...overrides };
}

/** A node whose agent reports the app running on `version` since `since`. */
export function running(target: TargetNode, version: string, since: number): ObservedNode {
  return observe(target, { currentVersionId: version, instance: { state: "running", since, reason: null } });
}

export function failed(target: TargetNode, since: number, reason = "health check failed"): ObservedNode {
  return observe(target, { instance: { state: "failed", since, reason } });
}

/**
 * A parsed strategy. The decider's examples name the nodes of each batch, so they take the first
 * batch in the planner's order (`canary.mode: "ordered"`) unless they say otherwise; automatic
 * canary selection has tests of its own (canary.test.ts).
 */
export function strategy(input: RolloutStrategyInput) {
  return rolloutStrategySchema.parse({ canary: { mode: "ordered" }, ...input });
}

/** A rollout of NEW over `targets`, started at `now`. */
export function started(targets: TargetNode[], input: RolloutStrategyInput, now = T0): RolloutState {
  const result = applyAction(newRolloutState(NEW, strategy(input)), { type: "start", nodes: targets }, now);
  if (!result.ok) throw new Error(result.error.message);
  return result.state;
}
