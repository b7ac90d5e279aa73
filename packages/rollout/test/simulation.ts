/**
 * A pure fleet simulator for property tests: nodes that go on and offline, join late, and whose
 * agents, once their desired version changes, report `pulling` and then `running` or `failed`
 * after a delay (or hang). A loop plays controller: decide, check invariants, apply, act like a
 * person when one is needed, and move the clock to the next event or wake-up.
 */
import fc from "fast-check";
import {
  type ActionResult,
  applyAction,
  applyDecisions,
  type Decision,
  decideRollout,
  FINISHED_STATUSES,
  isWithinMaintenanceWindow,
  newRolloutState,
  nextWakeUp,
  type ObservedNode,
  OPEN_ENDED_WAITS,
  type RolloutState,
  type RolloutStrategy,
  siteKey,
  siteWindows,
  type TargetNode,
} from "../src";
import { fleetArb, strategyArb } from "./arbitraries";
import { NEW, T0 } from "./fixtures";

const MIN = 60_000;

export interface SimNode {
  target: TargetNode;
  /** How its update to the new version ends; rollbacks always succeed unless it hangs. */
  fate: "succeed" | "fail" | "hang";
  delayMs: number;
  /** Instants (from T0) at which it flips between online and offline; finite, so it settles. */
  flips: number[];
  /** Joins the target at T0 + joinAt (a late joiner), or is there from the start. */
  joinAt: number | null;
}

interface Desire {
  versionId: string | null;
  at: number;
}

export class Fleet {
  private readonly desires = new Map<string, Desire[]>();

  constructor(readonly nodes: SimNode[]) {}

  isOnline(node: SimNode, t: number): boolean {
    let online = node.target.online;
    for (const flip of node.flips) if (T0 + flip <= t) online = !online;
    return online;
  }

  /** First instant ≥ t at which the node is online (null: never again). */
  nextOnline(node: SimNode, t: number): number | null {
    if (this.isOnline(node, t)) return t;
    for (const flip of node.flips) {
      if (T0 + flip > t && this.isOnline(node, T0 + flip)) return T0 + flip;
    }
    return null;
  }

  setDesired(nodeId: string, versionId: string | null, at: number): void {
    const list = this.desires.get(nodeId) ?? [];
    list.push({ versionId, at });
    this.desires.set(nodeId, list);
  }

  /** What the node's agent reports at t: the last desire it had time to act on wins. */
  observe(node: SimNode, t: number, inTarget: boolean): ObservedNode {
    let currentVersionId = node.target.currentVersionId;
    let instance: ObservedNode["instance"] = null;
    for (const desire of this.desires.get(node.target.id) ?? []) {
      if (desire.at > t) break;
      const startedAt = this.nextOnline(node, desire.at);
      if (startedAt === null || startedAt > t) continue;
      const hangs = node.fate === "hang";
      const fails = node.fate === "fail" && desire.versionId === NEW;
      const reportAt = this.nextOnline(node, startedAt + node.delayMs);
      if (hangs || reportAt === null || reportAt > t) {
        instance = { state: "pulling", since: startedAt, reason: null };
      } else if (fails) {
        instance = { state: "failed", since: reportAt, reason: "health check failed" };
      } else {
        currentVersionId = desire.versionId;
        instance = desire.versionId === null ? null : { state: "running", since: reportAt, reason: null };
      }
    }
    return { ...node.target, online: this.isOnline(node, t), currentVersionId, inTarget, instance };
  }

  /** Every node in the target at t, plus dispatched nodes (which the controller keeps passing in). */
  observeAll(t: number, state: RolloutState): ObservedNode[] {
    const touched = new Set(state.dispatches.map((d) => d.nodeId));
    const result: ObservedNode[] = [];
    for (const node of this.nodes) {
      const inTarget = node.joinAt === null || T0 + node.joinAt <= t;
      if (inTarget || touched.has(node.target.id)) result.push(this.observe(node, t, inTarget));
    }
    return result;
  }

  /** Next instant after t at which something changes on its own (a flip, a join, a report). */
  nextEvent(t: number): number | null {
    let next: number | null = null;
    const consider = (at: number | null) => {
      if (at !== null && at > t && (next === null || at < next)) next = at;
    };
    for (const node of this.nodes) {
      for (const flip of node.flips) consider(T0 + flip);
      if (node.joinAt !== null) consider(T0 + node.joinAt);
      for (const desire of this.desires.get(node.target.id) ?? []) {
        const startedAt = this.nextOnline(node, desire.at);
        consider(startedAt);
        if (startedAt !== null) consider(this.nextOnline(node, startedAt + node.delayMs));
      }
    }
    return next;
  }
}

export const simNodeArb = (maxNodes: number) =>
  fleetArb(maxNodes, Math.min(5, maxNodes)).chain((targets) =>
    fc.tuple(
      ...targets.map((target) =>
        fc.record({
          target: fc.constant(target),
          fate: fc.constantFrom(
            "succeed",
            "succeed",
            "succeed",
            "succeed",
            "succeed",
            "succeed",
            "succeed",
            "succeed",
            "fail",
            "hang",
          ),
          delayMs: fc.oneof(
            { weight: 4, arbitrary: fc.integer({ min: 1000, max: 2 * MIN }) },
            { weight: 1, arbitrary: fc.integer({ min: 1, max: 20 * MIN }) },
          ),
          flips: fc
            .uniqueArray(fc.integer({ min: 1, max: 6 * 60 * MIN }), { maxLength: 3 })
            .map((f) => f.sort((a, b) => a - b)),
          joinAt: fc.oneof(
            { weight: 6, arbitrary: fc.constant(null) },
            { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 * 60 * MIN }) },
          ),
        }),
      ),
    ),
  ) as fc.Arbitrary<SimNode[]>;

export interface Scenario {
  nodes: SimNode[];
  strategy: RolloutStrategy;
  /** What the person does when a batch failed: go on, or roll back. */
  onFailure: "resume" | "rollback";
  /** Steps at which the person pauses (and resumes at the next step). */
  pauseAt: number[];
}

export const scenarioArb = (options: { maxNodes?: number; windows?: boolean } = {}): fc.Arbitrary<Scenario> =>
  fc.record({
    nodes: simNodeArb(options.maxNodes ?? 30),
    strategy: strategyArb({ windows: options.windows }),
    onFailure: fc.constantFrom("resume", "rollback"),
    pauseAt: fc.uniqueArray(fc.integer({ min: 1, max: 30 }), { maxLength: 2 }),
  });

export interface Checks {
  /** Called with every decision list, before it is applied. */
  decided?: (state: RolloutState, observed: ObservedNode[], decisions: Decision[], now: number) => void;
  /** Called with every state the decisions were applied to, the decisions and the result. */
  applied?: (before: RolloutState, decisions: Decision[], after: RolloutState) => void;
}

export interface Outcome {
  state: RolloutState;
  fleet: Fleet;
  now: number;
  steps: number;
}

const HORIZON = 60 * 24 * 60 * MIN;

/**
 * Runs a rollout to its end and on until nothing changes any more (catch-up of late and
 * returning nodes included). Throws on a stall: a rollout that is neither finished nor waiting
 * for a person, with nothing to wake it up.
 */
export function simulate(scenario: Scenario, checks: Checks = {}): Outcome {
  const fleet = new Fleet(scenario.nodes);
  const initial = scenario.nodes.filter((n) => n.joinAt === null).map((n) => n.target);
  const start = applyAction(newRolloutState(NEW, scenario.strategy), { type: "start", nodes: initial }, T0);
  if (!start.ok) throw new Error(start.error.message);
  let state = start.state;
  let now = T0;
  let pausedByUs = false;
  for (let steps = 0; steps < 3000; steps++) {
    const observed = fleet.observeAll(now, state);
    const decisions = decideRollout(state, observed, now);
    checks.decided?.(state, observed, decisions, now);
    const next = applyDecisions(state, decisions);
    checks.applied?.(state, decisions, next);
    for (const d of decisions) {
      if (d.kind === "dispatch") for (const n of d.nodes) fleet.setDesired(n.nodeId, n.toVersionId, d.at);
    }
    state = next;

    // A person acts where one is needed (right away, at the same instant).
    const person: ActionResult | null =
      state.status === "awaiting_approval"
        ? applyAction(state, { type: "approve" }, now)
        : state.status === "failed"
          ? applyAction(state, { type: scenario.onFailure }, now)
          : pausedByUs && state.status === "paused"
            ? applyAction(state, { type: "resume" }, now)
            : state.status === "running" && scenario.pauseAt.includes(steps)
              ? applyAction(state, { type: "pause" }, now)
              : null;
    if (person) {
      if (!person.ok) throw new Error(person.error.message);
      pausedByUs = person.state.status === "paused";
      state = person.state;
      continue;
    }

    const changed = decisions.some((d) => d.kind !== "wait");
    if (changed) continue; // decide again at the same instant, as a controller would after writing
    const wake = nextWakeUp(decisions);
    const event = fleet.nextEvent(now);
    const candidates = [wake, event].filter((t): t is number => t !== null && t > now);
    if (candidates.length === 0) {
      if (FINISHED_STATUSES.includes(state.status)) return { state, fleet, now, steps };
      const waits = decisions.filter((d) => d.kind === "wait");
      throw new Error(
        `stall in status ${state.status} at ${new Date(now).toISOString()}: ${JSON.stringify(waits.map((w) => w.kind === "wait" && w.message))}`,
      );
    }
    now = Math.min(...candidates);
    if (now > T0 + HORIZON) throw new Error(`no end within the horizon (status ${state.status})`);
  }
  throw new Error(`no end within 3000 steps (status ${state.status})`);
}

/**
 * Nodes of a site updating now, by site: dispatched, not done (running the version it was sent
 * to, or failed since), and within its timeout, or past it but online and still switching
 * (pending, pulling, starting) within a second timeout. During a rollback, forward updates not
 * yet sent back count too.
 */
export function inFlightBySite(
  state: RolloutState,
  observed: ObservedNode[],
  now: number,
): Map<string, number> {
  const byId = new Map(observed.map((n) => [n.id, n]));
  const counts = new Map<string, number>();
  const count = (node: ObservedNode) =>
    counts.set(siteKey(node.siteId), (counts.get(siteKey(node.siteId)) ?? 0) + 1);
  const switching = (node: ObservedNode) =>
    node.instance !== null && ["pending", "pulling", "starting"].includes(node.instance.state);
  const inFlight = (node: ObservedNode, done: boolean, dispatchedAt: number, timeoutMs: number) =>
    !done &&
    (now < dispatchedAt + timeoutMs ||
      (node.online && switching(node) && now < dispatchedAt + 2 * timeoutMs));
  const rolledBack = new Set(state.rollback?.dispatches.map((d) => d.nodeId) ?? []);
  for (const d of state.rollback?.dispatches ?? []) {
    const node = byId.get(d.nodeId);
    if (!node) continue;
    const done =
      (d.toVersionId === null
        ? node.currentVersionId === null && !switching(node)
        : node.currentVersionId === d.toVersionId && node.instance?.state === "running") ||
      (node.instance?.state === "failed" && node.instance.since >= d.dispatchedAt);
    if (inFlight(node, done, d.dispatchedAt, state.strategy.defaults.timeoutSeconds * 1000)) count(node);
  }
  for (const d of state.dispatches) {
    const node = byId.get(d.nodeId);
    if (!node || rolledBack.has(d.nodeId)) continue;
    const policy =
      (d.batch === null ? undefined : state.plan?.batches[d.batch]?.policy) ?? state.strategy.defaults;
    const done =
      (node.currentVersionId === d.toVersionId && node.instance?.state === "running") ||
      (node.instance?.state === "failed" && node.instance.since >= d.dispatchedAt);
    if (inFlight(node, done, d.dispatchedAt, policy.timeoutSeconds * 1000)) count(node);
  }
  return counts;
}

/** Whether a forward dispatch at `now` to `node` respects its site's windows. */
export function windowOpen(strategy: RolloutStrategy, node: ObservedNode, now: number): boolean {
  return isWithinMaintenanceWindow(
    siteWindows(strategy, node.siteId) ?? undefined,
    node.siteTimeZone ?? "UTC",
    now,
  );
}

export { OPEN_ENDED_WAITS };
