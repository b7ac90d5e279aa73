/**
 * decideRollout and applyDecisions as they were before a step's cost followed what changed
 * instead of the fleet (every map of the plan, the dispatches and the observed nodes rebuilt on
 * every call; a Set of every dispatch built per dispatch decision). Kept verbatim (src/decide.ts
 * and the reducer of src/state.ts, imports pointed at ../src) as the reference the property test
 * (decide-equivalence.test.ts) holds the new ones to, and as the "before" of
 * bench/step-diff.bench.ts, with the checkNodes they called. The helpers they call (outcomes,
 * windows, budgets, gates), unchanged, are shared.
 */
import { gateStep } from "../src/gates/progress";
import { maintenanceWindowState, type WindowState } from "../src/maintenance-windows";
import {
  type ObservedNode,
  RolloutInputError,
  siteKey,
  stratifiedOrder,
  type TargetNode,
  timeZoneOf,
} from "../src/nodes";
import {
  batchVerdict,
  budgetSlotUntil,
  dispatchDeadline,
  failures,
  forwardOutcome,
  type NodeOutcome,
  offlineWaitDeadline,
  rollbackOutcome,
  tallyOutcomes,
} from "../src/outcomes";
import { type PlannedBatch, type RolloutPlan, siteUpdatingLimit, siteWindows } from "../src/plan";
import { planRollback } from "../src/rollback";
import type {
  BatchProgress,
  Decision,
  DispatchedNode,
  NodeDispatch,
  Phase,
  RollbackDispatch,
  RollbackProgress,
  RolloutState,
  WaitReason,
} from "../src/state";
import { type BatchPolicy, resolveBatchPolicy } from "../src/strategy";
import { DAY_MS, type EpochMs, SECOND_MS } from "../src/time";
import { isValidTimeZone } from "../src/time-zones";

// checkNodes of src/nodes.ts as it was (it now also returns the nodes by id).
/** Checks what the schemas upstream cannot: unique ids, valid and per-site consistent zones. */
function checkNodes(nodes: readonly TargetNode[]): void {
  const seen = new Set<string>();
  const zones = new Map<string, string | null>();
  const validZones = new Set<string>();
  nodes.forEach((node, i) => {
    if (seen.has(node.id)) throw new RolloutInputError(["nodes", i, "id"], `node ${node.id} is listed twice`);
    seen.add(node.id);
    if (node.siteTimeZone !== null && !validZones.has(node.siteTimeZone)) {
      if (isValidTimeZone(node.siteTimeZone)) validZones.add(node.siteTimeZone);
      else {
        throw new RolloutInputError(
          ["nodes", i, "siteTimeZone"],
          `unknown time zone ${JSON.stringify(node.siteTimeZone)}: use an IANA name such as "Europe/Berlin"`,
        );
      }
    }
    const key = siteKey(node.siteId);
    const known = zones.get(key);
    if (known === undefined) zones.set(key, node.siteTimeZone);
    else if (known !== node.siteTimeZone) {
      throw new RolloutInputError(
        ["nodes", i, "siteTimeZone"],
        `nodes of site ${node.siteId ?? "(none)"} disagree on its time zone (${known} and ${node.siteTimeZone})`,
      );
    }
  });
}

/**
 * Decides what to do now. `nodes`: every node the rollout targets now (`inTarget: true`) plus
 * every node it has dispatched that left the target (`inTarget: false`), with their reports.
 */
export function referenceDecideRollout(
  state: RolloutState,
  nodes: readonly ObservedNode[],
  now: EpochMs,
): Decision[] {
  checkNodes(nodes);
  const ctx = new DecisionContext(state, nodes, now);
  const decisions: Decision[] = [];
  let current = state;
  // Each batch (forward, then its rollback twin) takes a few transitions at most.
  const maxSteps = 6 * ((state.plan?.batches.length ?? 0) + 1) + 10;
  for (let step = 0; step < maxSteps; step++) {
    const next = transition(current, ctx);
    if (!next) break;
    decisions.push(next);
    current = referenceApplyDecision(current, next);
  }
  decisions.push(...nodeDecisions(current, ctx));
  return decisions;
}

class DecisionContext {
  readonly nodes = new Map<string, ObservedNode>();
  /** Planned batch of each node in the plan. */
  readonly plannedBatch = new Map<string, number>();
  readonly forwardDispatches = new Map<string, NodeDispatch>();
  private readonly windowCache = new Map<string, WindowState>();
  private readonly budgetCache = new Map<string, number | null>();
  private targetBySite: Map<string, number> | null = null;

  constructor(
    readonly state: RolloutState,
    nodes: readonly ObservedNode[],
    readonly now: EpochMs,
  ) {
    for (const node of nodes) this.nodes.set(node.id, node);
    for (const batch of state.plan?.batches ?? []) {
      for (const id of batch.nodeIds) this.plannedBatch.set(id, batch.index);
    }
    for (const dispatch of state.dispatches) this.forwardDispatches.set(dispatch.nodeId, dispatch);
  }

  /**
   * Window state of a site now. Computed once per distinct (windows, zone) and decision: sites
   * without windows of their own share the default's.
   */
  window(node: ObservedNode): WindowState {
    const own =
      node.siteId !== null && this.state.strategy.maintenanceWindows?.sites?.[node.siteId] !== undefined;
    const key = `${own ? `site:${node.siteId}` : "default"}\u0000${timeZoneOf(node)}`;
    let state = this.windowCache.get(key);
    if (!state) {
      const windows = siteWindows(this.state.strategy, node.siteId);
      state = maintenanceWindowState(windows ?? undefined, timeZoneOf(node), this.now);
      this.windowCache.set(key, state);
    }
    return state;
  }

  /** The site's budget: frozen in the plan, or (a site new since planning) from its nodes now. */
  budget(siteId: string | null): number | null {
    const key = siteKey(siteId);
    if (!this.budgetCache.has(key)) {
      if (!this.targetBySite) {
        this.targetBySite = new Map();
        for (const node of this.nodes.values()) {
          if (node.inTarget)
            this.targetBySite.set(
              siteKey(node.siteId),
              (this.targetBySite.get(siteKey(node.siteId)) ?? 0) + 1,
            );
        }
        for (const site of this.state.plan?.sites ?? [])
          this.budgetCache.set(siteKey(site.siteId), site.maxUpdating);
      }
      if (!this.budgetCache.has(key)) {
        const value = siteUpdatingLimit(this.state.strategy, siteId, this.targetBySite.get(key) ?? 0);
        this.budgetCache.set(key, value);
      }
    }
    return this.budgetCache.get(key) ?? null;
  }

  /** Policy that governs a forward dispatch: its batch's, or the defaults for late joiners. */
  policyOf(batch: number | null): BatchPolicy {
    const planned = batch === null ? undefined : this.state.plan?.batches[batch];
    return planned?.policy ?? resolveBatchPolicy(this.state.strategy, -1);
  }
}

function requirePlan(state: RolloutState): RolloutPlan {
  if (!state.plan) throw new RolloutInputError(["plan"], `a ${state.status} rollout must have a plan`);
  return state.plan;
}

function requireRollback(state: RolloutState): RollbackProgress {
  if (!state.rollback)
    throw new RolloutInputError(["rollback"], "a rolling-back rollout must have a rollback plan");
  return state.rollback;
}

// ---------------------------------------------------------------------------------------------
// Transitions of the rollout and its batches
// ---------------------------------------------------------------------------------------------

function transition(state: RolloutState, ctx: DecisionContext): Decision | null {
  if (state.status === "running") return forwardTransition(state, ctx);
  if (state.status === "rolling_back") return rollbackTransition(state, ctx);
  return null;
}

function forwardTransition(state: RolloutState, ctx: DecisionContext): Decision | null {
  const plan = requirePlan(state);
  const at = ctx.now;
  const i = state.batches.length - 1;
  const start = (batch: number): Decision => ({ kind: "start_batch", phase: "forward", batch, at });
  const setStatus = (status: RolloutState["status"], reason: string): Decision => ({
    kind: "set_status",
    status,
    reason,
    at,
  });
  if (i < 0) {
    if (plan.totals.toUpdate === 0) {
      return setStatus("completed", "nothing to update: every targeted node already runs the version");
    }
    return start(0);
  }
  const progress = state.batches[i];
  const planned = plan.batches[i];
  if (!progress || !planned)
    throw new RolloutInputError(["batches", i], "batch progress does not match the plan");
  if (progress.finishedAt === null) {
    const tally = tallyOutcomes(
      forwardBatchOutcomes(state, ctx, planned, progress.startedAt).map((o) => o.outcome),
    );
    const verdict = batchVerdict(tally, planned.policy.successThreshold);
    if (!verdict) return null;
    return { kind: "finish_batch", phase: "forward", batch: i, ...verdict, tally, at };
  }
  if (progress.verdict === "failed" && progress.failureAcceptedAt === null) {
    const why = `batch ${i} failed: ${progress.reason ?? "missed its success threshold"}`;
    if (state.strategy.onBatchFailure === "rollback") {
      return { kind: "start_rollback", plan: planRollback(state), reason: `${why}; rolling back`, at };
    }
    return setStatus("failed", `${why}; resume to go on anyway, roll back, or abort`);
  }
  // Metric gates (gates/progress.ts): judged by the controller once their window is over.
  const gates = gateStep(state, i);
  if (gates.kind === "wait") return null;
  if (gates.kind === "rollback") {
    return { kind: "start_rollback", plan: planRollback(state), reason: `${gates.reason}; rolling back`, at };
  }
  if (gates.kind === "pause") {
    return setStatus("failed", `${gates.reason}; resume to go on anyway, roll back, or abort`);
  }
  if (i === plan.batches.length - 1) return setStatus("completed", "every batch is done");
  // Resuming past a failure is a person's decision to go on: it also stands for the pause.
  if (progress.failureAcceptedAt !== null) return start(i + 1);
  const pause = planned.policy.pauseAfter;
  if (pause === "none") return start(i + 1);
  if (pause === "approval") {
    if (progress.approvedAt !== null) return start(i + 1);
    return setStatus("awaiting_approval", `batch ${i} passed; batch ${i + 1} waits for a person's approval`);
  }
  // A timed pause runs from the batch's end, or from its gates' verdict when it had gates.
  return at >= pauseStart(progress) + pause.seconds * SECOND_MS ? start(i + 1) : null;
}

function pauseStart(progress: BatchProgress): EpochMs {
  return progress.gates?.evaluatedAt ?? progress.finishedAt ?? 0;
}

function rollbackTransition(state: RolloutState, ctx: DecisionContext): Decision | null {
  const rollback = requireRollback(state);
  const at = ctx.now;
  const i = rollback.batches.length - 1;
  const done = (): Decision => ({
    kind: "set_status",
    status: "rolled_back",
    reason: rollbackSummary(rollback),
    at,
  });
  if (i < 0) {
    if (rollback.plan.batches.length === 0) return done();
    return { kind: "start_batch", phase: "rollback", batch: 0, at };
  }
  const progress = rollback.batches[i];
  if (!progress) return null;
  if (progress.finishedAt === null) {
    const tally = tallyOutcomes(rollbackBatchOutcomes(state, ctx, i).map((o) => o.outcome));
    if (tally.inProgress > 0) return null;
    const failed = failures(tally);
    return {
      kind: "finish_batch",
      phase: "rollback",
      batch: i,
      verdict: failed > 0 ? "failed" : "succeeded",
      reason:
        `${tally.succeeded} nodes back on their previous version, ${failed} failed,` +
        ` ${tally.skippedOffline} offline (rolled back when they return)`,
      tally,
      at,
    };
  }
  if (i === rollback.plan.batches.length - 1) return done();
  return { kind: "start_batch", phase: "rollback", batch: i + 1, at };
}

function rollbackSummary(rollback: RollbackProgress): string {
  let back = 0;
  let failed = 0;
  let offline = 0;
  for (const batch of rollback.batches) {
    back += batch.tally?.succeeded ?? 0;
    failed += batch.tally ? failures(batch.tally) : 0;
    offline += batch.tally?.skippedOffline ?? 0;
  }
  return `rolled back: ${back} nodes on their previous version, ${failed} failed, ${offline} offline (rolled back when they return)`;
}

// ---------------------------------------------------------------------------------------------
// Node outcomes
// ---------------------------------------------------------------------------------------------

interface Classified {
  id: string;
  outcome: NodeOutcome;
}

function forwardBatchOutcomes(
  state: RolloutState,
  ctx: DecisionContext,
  planned: PlannedBatch,
  startedAt: EpochMs,
): Classified[] {
  return planned.nodeIds.map((id) => ({
    id,
    outcome: forwardOutcome({
      node: ctx.nodes.get(id),
      dispatch: ctx.forwardDispatches.get(id),
      targetVersionId: state.targetVersionId,
      policy: planned.policy,
      batchStartedAt: startedAt,
      now: ctx.now,
    }),
  }));
}

function rollbackBatchOutcomes(state: RolloutState, ctx: DecisionContext, index: number): Classified[] {
  const rollback = requireRollback(state);
  const dispatched = new Map(rollback.dispatches.map((d) => [d.nodeId, d]));
  return (rollback.plan.batches[index]?.nodes ?? []).map(({ nodeId }) => ({
    id: nodeId,
    outcome: rollbackOutcome({
      node: ctx.nodes.get(nodeId),
      dispatch: dispatched.get(nodeId),
      timeoutSeconds: state.strategy.defaults.timeoutSeconds,
      now: ctx.now,
    }),
  }));
}

// ---------------------------------------------------------------------------------------------
// Dispatches and waits
// ---------------------------------------------------------------------------------------------

function nodeDecisions(state: RolloutState, ctx: DecisionContext): Decision[] {
  const person = (reason: WaitReason, message: string): Decision[] => [
    { kind: "wait", reason, message, until: null, nodeIds: [] },
  ];
  switch (state.status) {
    case "pending":
      return person("not_started", "not started yet: waits for a person to start it");
    case "paused":
      return person("paused", state.statusReason ?? "paused by a person: waits for them to resume");
    case "failed":
      return person("halted_by_failure", state.statusReason ?? "halted by a failed batch");
    case "cancelled":
      return [];
    case "awaiting_approval":
      return [
        ...forwardNodeDecisions(state, ctx, false),
        ...person("approval", state.statusReason ?? "waits for a person's approval"),
      ];
    case "running":
      return forwardNodeDecisions(state, ctx, true);
    case "completed":
      return forwardNodeDecisions(state, ctx, false);
    case "rolling_back":
    case "rolled_back":
      return rollbackNodeDecisions(state, ctx);
  }
}

/**
 * Hands out dispatch slots site by site, within windows (forward only) and budgets, and keeps
 * track of every node updating (already, or dispatched just now) for the "updating" wait.
 */
class Dispatcher {
  private readonly perSite = new Map<string, { count: number; earliestDeadline: EpochMs | null }>();
  private readonly updatingIds: string[] = [];
  private earliestDeadline: EpochMs | null = null;
  private readonly windowWaits = new Map<
    string,
    { siteId: string | null; until: EpochMs | null; ids: string[] }
  >();
  private readonly budgetWaits = new Map<string, { siteId: string | null; ids: string[] }>();
  private readonly dispatches = new Map<string, Extract<Decision, { kind: "dispatch" }>>();

  constructor(
    private readonly ctx: DecisionContext,
    private readonly respectWindows: boolean,
    /** What the "updating" wait calls these nodes. */
    private readonly updatingWhat: string,
  ) {}

  /** A node updating until `deadline` at the latest: it holds a slot of its site's budget. */
  countUpdating(node: ObservedNode, deadline: EpochMs): void {
    const key = siteKey(node.siteId);
    const entry = this.perSite.get(key) ?? { count: 0, earliestDeadline: null };
    entry.count++;
    if (entry.earliestDeadline === null || deadline < entry.earliestDeadline)
      entry.earliestDeadline = deadline;
    this.perSite.set(key, entry);
    this.updatingIds.push(node.id);
    if (this.earliestDeadline === null || deadline < this.earliestDeadline) this.earliestDeadline = deadline;
  }

  /** Dispatches the node now if its site's window and budget allow, else records why it waits. */
  offer(
    node: ObservedNode,
    purpose: "batch" | "catch_up" | "rollback",
    batch: number | null,
    target: DispatchedNode,
  ): void {
    const key = siteKey(node.siteId);
    if (this.respectWindows) {
      const window = this.ctx.window(node);
      if (!window.open) {
        const wait = this.windowWaits.get(key) ?? { siteId: node.siteId, until: window.opensAt, ids: [] };
        wait.ids.push(node.id);
        this.windowWaits.set(key, wait);
        return;
      }
    }
    const budget = this.ctx.budget(node.siteId);
    if (budget !== null && (this.perSite.get(key)?.count ?? 0) >= budget) {
      const wait = this.budgetWaits.get(key) ?? { siteId: node.siteId, ids: [] };
      wait.ids.push(node.id);
      this.budgetWaits.set(key, wait);
      return;
    }
    const policy = purpose === "rollback" ? this.ctx.state.strategy.defaults : this.ctx.policyOf(batch);
    this.countUpdating(node, dispatchDeadline(this.ctx.now, policy));
    const group = `${purpose}:${batch}`;
    const decision = this.dispatches.get(group) ?? {
      kind: "dispatch" as const,
      purpose,
      batch,
      nodes: [],
      at: this.ctx.now,
    };
    decision.nodes.push(target);
    this.dispatches.set(group, decision);
  }

  /** The dispatches, then the waits for windows, budgets and updates in flight. */
  decisions(): Decision[] {
    const result: Decision[] = [...this.dispatches.values()];
    const now = this.ctx.now;
    for (const wait of this.windowWaits.values()) {
      const until = wait.until ?? now + DAY_MS;
      result.push({
        kind: "wait",
        reason: "maintenance_window",
        siteId: wait.siteId,
        nodeIds: wait.ids,
        until,
        message:
          wait.until === null
            ? `${siteName(wait.siteId)} has no maintenance window in the next 8 days; checked again at ${iso(until)}`
            : `${siteName(wait.siteId)} is outside its maintenance window until ${iso(until)}`,
      });
    }
    for (const [key, wait] of this.budgetWaits) {
      const site = this.perSite.get(key);
      const until = site?.earliestDeadline ?? now + DAY_MS;
      result.push({
        kind: "wait",
        reason: "disruption_budget",
        siteId: wait.siteId,
        nodeIds: wait.ids,
        until,
        message:
          `${siteName(wait.siteId)} has ${site?.count ?? 0} of at most ${this.ctx.budget(wait.siteId)} nodes` +
          ` updating (disruption budget); a slot frees up by ${iso(until)} at the latest`,
      });
    }
    if (this.updatingIds.length > 0 && this.earliestDeadline !== null) {
      result.push({
        kind: "wait",
        reason: "updating",
        nodeIds: this.updatingIds,
        until: this.earliestDeadline,
        message:
          `${this.updatingIds.length} node(s) ${this.updatingWhat}; the first timeout runs out at` +
          ` ${iso(this.earliestDeadline)}`,
      });
    }
    return result;
  }
}

function forwardNodeDecisions(
  state: RolloutState,
  ctx: DecisionContext,
  batchMayDispatch: boolean,
): Decision[] {
  const plan = requirePlan(state);
  const dispatcher = new Dispatcher(ctx, true, "updating");
  const waits: Decision[] = [];

  // What is already updating holds its site's budget.
  for (const dispatch of state.dispatches) {
    const node = ctx.nodes.get(dispatch.nodeId);
    if (!node) continue;
    const policy = ctx.policyOf(dispatch.batch);
    const outcome = forwardOutcome({
      node,
      dispatch,
      targetVersionId: state.targetVersionId,
      policy,
      batchStartedAt: dispatch.dispatchedAt,
      now: ctx.now,
    });
    const slotUntil = budgetSlotUntil(outcome, node, dispatch.dispatchedAt, policy.timeoutSeconds, ctx.now);
    if (slotUntil !== null) dispatcher.countUpdating(node, slotUntil);
  }

  // The running batch: its ready nodes first, in plan order.
  const current = state.batches.length - 1;
  const progress = state.batches[current];
  const planned = plan.batches[current];
  if (batchMayDispatch && progress && planned && progress.finishedAt === null) {
    const offline: string[] = [];
    for (const { id, outcome } of forwardBatchOutcomes(state, ctx, planned, progress.startedAt)) {
      const node = ctx.nodes.get(id);
      if (!node) continue;
      if (outcome === "ready") {
        dispatcher.offer(node, "batch", current, {
          nodeId: id,
          fromVersionId: node.currentVersionId,
          toVersionId: state.targetVersionId,
        });
      } else if (outcome === "waiting_offline") {
        offline.push(id);
      }
    }
    if (offline.length > 0) {
      const until = offlineWaitDeadline(progress.startedAt, planned.policy);
      waits.push({
        kind: "wait",
        reason: "offline",
        nodeIds: offline,
        until,
        message:
          `${offline.length} offline node(s) of batch ${current}: the batch waits for them until ${iso(until)},` +
          ` then counts them as ${planned.policy.afterWait === "fail" ? "failed" : "skipped (they get the version when they return)"}`,
      });
    }
  }
  if (state.status === "running" && progress && planned && progress.finishedAt !== null) {
    const gates = gateStep(state, current);
    if (gates.kind === "wait") {
      waits.push({
        kind: "wait",
        reason: "gates",
        nodeIds: [],
        until: gates.until,
        message: `batch ${current}'s metric gates are judged at ${iso(gates.until)}, when their window is over`,
      });
    }
    const pause = planned.policy.pauseAfter;
    if (
      gates.kind === "go" &&
      typeof pause === "object" &&
      progress.failureAcceptedAt === null &&
      current < plan.batches.length - 1
    ) {
      const until = pauseStart(progress) + pause.seconds * SECOND_MS;
      waits.push({
        kind: "wait",
        reason: "timed_pause",
        nodeIds: [],
        until,
        message: `pause after batch ${current}: batch ${current + 1} starts at ${iso(until)}`,
      });
    }
  }

  waits.push(...catchUp(state, ctx, dispatcher));
  return [...dispatcher.decisions(), ...waits];
}

/**
 * Continuous target: nodes of batches that are over and were not dispatched (offline then,
 * online now) and nodes that joined the target after planning get the version too, within
 * windows and budgets, after the running batch's nodes. Late joiners wait until the first batch
 * has passed: the version must have proven itself once.
 */
function catchUp(state: RolloutState, ctx: DecisionContext, dispatcher: Dispatcher): Decision[] {
  const firstPassed =
    state.status === "completed" ||
    (state.batches[0]?.finishedAt != null &&
      (state.batches[0].verdict === "succeeded" || state.batches[0].failureAcceptedAt !== null) &&
      gateStep(state, 0).kind === "go");
  const returning: ObservedNode[] = [];
  const late: ObservedNode[] = [];
  const offline: string[] = [];
  for (const node of ctx.nodes.values()) {
    if (
      !node.inTarget ||
      ctx.forwardDispatches.has(node.id) ||
      node.currentVersionId === state.targetVersionId
    ) {
      continue;
    }
    const batch = ctx.plannedBatch.get(node.id);
    if (batch !== undefined && state.batches[batch]?.finishedAt == null) continue; // its batch is not over
    if (!node.online) offline.push(node.id);
    else if (batch !== undefined) returning.push(node);
    else late.push(node);
  }
  const byPlan = (a: ObservedNode, b: ObservedNode) =>
    (ctx.plannedBatch.get(a.id) ?? 0) - (ctx.plannedBatch.get(b.id) ?? 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  for (const node of returning.sort(byPlan)) {
    dispatcher.offer(node, "catch_up", ctx.plannedBatch.get(node.id) ?? null, {
      nodeId: node.id,
      fromVersionId: node.currentVersionId,
      toVersionId: state.targetVersionId,
    });
  }
  const waits: Decision[] = [];
  if (firstPassed) {
    for (const node of stratifiedOrder(late)) {
      dispatcher.offer(node, "catch_up", null, {
        nodeId: node.id,
        fromVersionId: node.currentVersionId,
        toVersionId: state.targetVersionId,
      });
    }
  } else if (late.length > 0) {
    waits.push({
      kind: "wait",
      reason: "late_joiner",
      nodeIds: stratifiedOrder(late).map((n) => n.id),
      until: null,
      message: `${late.length} node(s) joined the target after planning: they get the version once the first batch has passed`,
    });
  }
  if (offline.length > 0) {
    waits.push({
      kind: "wait",
      reason: "offline_until_return",
      nodeIds: offline.sort(),
      until: null,
      message: `${offline.length} offline node(s) without the version whose turn has come: they get it when they return`,
    });
  }
  return waits;
}

function rollbackNodeDecisions(state: RolloutState, ctx: DecisionContext): Decision[] {
  const rollback = requireRollback(state);
  const dispatcher = new Dispatcher(ctx, false, "rolling back");
  const dispatched = new Map(rollback.dispatches.map((d) => [d.nodeId, d]));
  const timeoutSeconds = state.strategy.defaults.timeoutSeconds;
  for (const dispatch of rollback.dispatches) {
    const node = ctx.nodes.get(dispatch.nodeId);
    if (!node) continue;
    const outcome = rollbackOutcome({ node, dispatch, timeoutSeconds, now: ctx.now });
    const slotUntil = budgetSlotUntil(outcome, node, dispatch.dispatchedAt, timeoutSeconds, ctx.now);
    if (slotUntil !== null) dispatcher.countUpdating(node, slotUntil);
  }
  // Forward updates still in flight (a batch fails before its slow nodes are done; a timed-out
  // node may still be switching) hold their site's budget until the rollback sends them back.
  for (const dispatch of state.dispatches) {
    const node = ctx.nodes.get(dispatch.nodeId);
    if (!node || dispatched.has(dispatch.nodeId)) continue;
    const policy = ctx.policyOf(dispatch.batch);
    const outcome = forwardOutcome({
      node,
      dispatch,
      targetVersionId: state.targetVersionId,
      policy,
      batchStartedAt: dispatch.dispatchedAt,
      now: ctx.now,
    });
    const slotUntil = budgetSlotUntil(outcome, node, dispatch.dispatchedAt, policy.timeoutSeconds, ctx.now);
    if (slotUntil !== null) dispatcher.countUpdating(node, slotUntil);
  }
  // Started rollback batches, in order: the running one, and returning nodes of the ones before.
  const offline: string[] = [];
  for (let index = 0; index < rollback.batches.length; index++) {
    for (const target of rollback.plan.batches[index]?.nodes ?? []) {
      const node = ctx.nodes.get(target.nodeId);
      if (!node || dispatched.has(target.nodeId)) continue;
      if (!node.online) {
        offline.push(node.id);
        continue;
      }
      dispatcher.offer(node, "rollback", index, {
        nodeId: node.id,
        fromVersionId: node.currentVersionId,
        toVersionId: target.toVersionId,
      });
    }
  }
  const waits: Decision[] = [];
  if (offline.length > 0) {
    waits.push({
      kind: "wait",
      reason: "offline_until_return",
      nodeIds: offline.sort(),
      until: null,
      message: `${offline.length} offline node(s): they are rolled back when they return`,
    });
  }
  return [...dispatcher.decisions(), ...waits];
}

function siteName(siteId: string | null): string {
  return siteId === null ? "nodes without a site" : `site ${siteId}`;
}

function iso(at: EpochMs): string {
  return new Date(at).toISOString();
}

// ---------------------------------------------------------------------------------------------
// The reducer (src/state.ts)
// ---------------------------------------------------------------------------------------------

/**
 * Applies decisions to the state, the way the controller persists them. Idempotent: a decision
 * already applied changes nothing (a node is never dispatched twice, a batch never restarted),
 * so a controller that crashed half-way may apply the same list again.
 */
export function referenceApplyDecisions(state: RolloutState, decisions: readonly Decision[]): RolloutState {
  return decisions.reduce(referenceApplyDecision, state);
}

export function referenceApplyDecision(state: RolloutState, decision: Decision): RolloutState {
  switch (decision.kind) {
    case "wait":
      return state;
    case "set_status":
      if (state.status === decision.status) return state;
      return {
        ...state,
        status: decision.status,
        statusReason: decision.reason,
        statusChangedAt: decision.at,
      };
    case "start_rollback":
      if (state.rollback) return state;
      return {
        ...state,
        status: "rolling_back",
        statusReason: decision.reason,
        statusChangedAt: decision.at,
        rollback: {
          startedAt: decision.at,
          reason: decision.reason,
          plan: decision.plan,
          batches: [],
          dispatches: [],
        },
      };
    case "start_batch":
      return withBatches(state, decision.phase, (batches) =>
        batches.length !== decision.batch ? batches : [...batches, startedBatch(decision.at)],
      );
    case "finish_batch":
      return withBatches(state, decision.phase, (batches) => {
        const batch = batches[decision.batch];
        if (!batch || batch.finishedAt !== null) return batches;
        const finished: BatchProgress = {
          ...batch,
          finishedAt: decision.at,
          verdict: decision.verdict,
          tally: decision.tally,
          reason: decision.reason,
        };
        return batches.map((b, i) => (i === decision.batch ? finished : b));
      });
    case "dispatch":
      return applyDispatch(state, decision);
  }
}

function startedBatch(at: EpochMs): BatchProgress {
  return {
    startedAt: at,
    finishedAt: null,
    verdict: null,
    tally: null,
    reason: null,
    approvedAt: null,
    failureAcceptedAt: null,
  };
}

function withBatches(
  state: RolloutState,
  phase: Phase,
  change: (batches: BatchProgress[]) => BatchProgress[],
): RolloutState {
  if (phase === "forward") {
    const batches = change(state.batches);
    return batches === state.batches ? state : { ...state, batches };
  }
  if (!state.rollback) return state;
  const batches = change(state.rollback.batches);
  return batches === state.rollback.batches ? state : { ...state, rollback: { ...state.rollback, batches } };
}

function applyDispatch(state: RolloutState, decision: Extract<Decision, { kind: "dispatch" }>): RolloutState {
  if (decision.purpose === "rollback") {
    if (!state.rollback) return state;
    const done = new Set(state.rollback.dispatches.map((d) => d.nodeId));
    const added: RollbackDispatch[] = [];
    for (const node of decision.nodes) {
      if (done.has(node.nodeId)) continue;
      done.add(node.nodeId);
      added.push({ nodeId: node.nodeId, toVersionId: node.toVersionId, dispatchedAt: decision.at });
    }
    if (added.length === 0) return state;
    return {
      ...state,
      rollback: { ...state.rollback, dispatches: [...state.rollback.dispatches, ...added] },
    };
  }
  const done = new Set(state.dispatches.map((d) => d.nodeId));
  const added: NodeDispatch[] = [];
  for (const node of decision.nodes) {
    if (done.has(node.nodeId) || node.toVersionId === null) continue;
    done.add(node.nodeId);
    added.push({
      nodeId: node.nodeId,
      batch: decision.batch,
      catchUp: decision.purpose === "catch_up",
      fromVersionId: node.fromVersionId,
      toVersionId: node.toVersionId,
      dispatchedAt: decision.at,
    });
  }
  if (added.length === 0) return state;
  return { ...state, dispatches: [...state.dispatches, ...added] };
}
