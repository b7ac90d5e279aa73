/**
 * The decider, the controller's brain: given a rollout's state, what its nodes report and the
 * time, what happens next. Pure: deciding twice on the same input gives the same decisions, and
 * applying them twice changes nothing more than applying them once (see `applyDecisions`), so a
 * controller that crashed at any point simply decides again.
 *
 * One call runs every transition that is due (finish a batch, start the next, complete, roll
 * back, ...) and then says which nodes to dispatch now and why every other one waits. Nothing
 * waits without a reason; everything that waits on time carries the instant (`until`) at which
 * it is judged again, so the controller knows when to wake up (`nextWakeUp`).
 */
import { dispatchLookup, entryOf, plannedBatchIndex, positionIn } from "./dispatch-index";
import { gateStep } from "./gates/progress";
import { maintenanceWindowState, type WindowState } from "./maintenance-windows";
import {
  checkNodes,
  type ObservedNode,
  RolloutInputError,
  siteKey,
  stratifiedOrder,
  timeZoneOf,
} from "./nodes";
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
} from "./outcomes";
import { type PlannedBatch, type RolloutPlan, siteUpdatingLimit, siteWindows } from "./plan";
import { planRollback } from "./rollback";
import {
  applyDecision,
  type BatchProgress,
  type Decision,
  type DispatchedNode,
  type RollbackProgress,
  type RolloutState,
  type WaitReason,
} from "./state";
import { type BatchPolicy, resolveBatchPolicy } from "./strategy";
import { DAY_MS, type EpochMs, SECOND_MS } from "./time";

/** Waits that only a person (or a node coming back) ends; every other wait has an `until`. */
export const OPEN_ENDED_WAITS: ReadonlySet<WaitReason> = new Set([
  "not_started",
  "paused",
  "halted_by_failure",
  "approval",
  "offline_until_return",
  "late_joiner",
]);

/**
 * Decides what to do now. `nodes`: every node the rollout targets now (`inTarget: true`) plus
 * every node it has dispatched that left the target (`inTarget: false`), with their reports.
 */
export function decideRollout(state: RolloutState, nodes: readonly ObservedNode[], now: EpochMs): Decision[] {
  const ctx = new DecisionContext(state, checkNodes(nodes), now);
  const decisions: Decision[] = [];
  let current = state;
  // Each batch (forward, then its rollback twin) takes a few transitions at most.
  const maxSteps = 6 * ((state.plan?.batches.length ?? 0) + 1) + 10;
  for (let step = 0; step < maxSteps; step++) {
    const next = transition(current, ctx);
    if (!next) break;
    decisions.push(next);
    current = applyDecision(current, next);
  }
  decisions.push(...nodeDecisions(current, ctx));
  return decisions;
}

/** The earliest `until` of the waits: when the controller should decide again at the latest. */
export function nextWakeUp(decisions: readonly Decision[]): EpochMs | null {
  let earliest: EpochMs | null = null;
  for (const d of decisions) {
    if (d.kind === "wait" && d.until !== null && (earliest === null || d.until < earliest))
      earliest = d.until;
  }
  return earliest;
}

/**
 * What one call of decideRollout looks up, each built at most once per call. The plan's and the
 * dispatch lists' indexes are kept per list across calls (dispatch-index.ts): the controller's
 * next step starts from the state its previous step made, whose plan is the same object and whose
 * dispatch list grew from the indexed one. Only the observed nodes are new on every step.
 */
class DecisionContext {
  /** Planned batch of each node in the plan (the last batch naming it). */
  readonly plannedBatch: ReadonlyMap<string, number>;
  /** By site id: sites share the state only if they share windows and zone, so per site is enough. */
  private readonly windowCache = new Map<string | null, { zone: string; state: WindowState }>();
  private planBudgets: Map<string, number | null> | null = null;
  private readonly budgetCache = new Map<string, number | null>();
  private targetBySite: Map<string, number> | null = null;
  private readonly policies = new Map<number | null, BatchPolicy>();
  /** The running batch's outcomes: a step's transition and its dispatches both need them. */
  private outcomes: {
    planned: PlannedBatch;
    startedAt: EpochMs;
    targetVersionId: string;
    outcomes: NodeOutcome[];
    /** The observed node of each (looked up once: a lookup in a fleet-sized map is not cheap). */
    nodes: (ObservedNode | undefined)[];
  } | null = null;

  constructor(
    readonly state: RolloutState,
    /** The observed nodes by id, in their order (checkNodes). */
    readonly nodes: ReadonlyMap<string, ObservedNode>,
    readonly now: EpochMs,
  ) {
    this.plannedBatch = plannedBatchIndex(state.plan);
  }

  /**
   * Window state of a site now, computed once per site and decision. (It used to be keyed by a
   * string made per offered node; the windows of a site and its zone do not change within a call:
   * checkNodes holds a site's nodes to one zone, and a node of another zone is not cached.)
   */
  window(node: ObservedNode): WindowState {
    const zone = timeZoneOf(node);
    const cached = this.windowCache.get(node.siteId);
    if (cached && cached.zone === zone) return cached.state;
    const windows = siteWindows(this.state.strategy, node.siteId);
    const state = maintenanceWindowState(windows ?? undefined, zone, this.now);
    if (!cached) this.windowCache.set(node.siteId, { zone, state });
    return state;
  }

  /**
   * The site's budget: frozen in the plan, or (a site new since planning) from its nodes now.
   * Only a site the plan does not know needs the nodes counted per site (a pass over the fleet).
   */
  budget(siteId: string | null): number | null {
    const key = siteKey(siteId);
    if (!this.planBudgets) {
      this.planBudgets = new Map();
      for (const site of this.state.plan?.sites ?? [])
        this.planBudgets.set(siteKey(site.siteId), site.maxUpdating);
    }
    if (this.planBudgets.has(key)) return this.planBudgets.get(key) ?? null;
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
      }
      const value = siteUpdatingLimit(this.state.strategy, siteId, this.targetBySite.get(key) ?? 0);
      this.budgetCache.set(key, value);
    }
    return this.budgetCache.get(key) ?? null;
  }

  /** Policy that governs a forward dispatch: its batch's, or the defaults for late joiners. */
  policyOf(batch: number | null): BatchPolicy {
    let policy = this.policies.get(batch);
    if (!policy) {
      const planned = batch === null ? undefined : this.state.plan?.batches[batch];
      policy = planned?.policy ?? resolveBatchPolicy(this.state.strategy, -1);
      this.policies.set(batch, policy);
    }
    return policy;
  }

  /** Outcomes of a forward batch's nodes, in plan order; computed once per batch and call. */
  forwardOutcomes(
    state: RolloutState,
    planned: PlannedBatch,
    startedAt: EpochMs,
  ): { outcomes: NodeOutcome[]; nodes: (ObservedNode | undefined)[] } {
    const known = this.outcomes;
    if (
      known?.planned === planned &&
      known.startedAt === startedAt &&
      known.targetVersionId === state.targetVersionId
    )
      return known;
    const dispatched = dispatchLookup(this.state.dispatches);
    const nodes = planned.nodeIds.map((id) => this.nodes.get(id));
    const outcomes = planned.nodeIds.map((id, k) =>
      forwardOutcome({
        node: nodes[k],
        dispatch: dispatched(id),
        targetVersionId: state.targetVersionId,
        policy: planned.policy,
        batchStartedAt: startedAt,
        now: this.now,
      }),
    );
    this.outcomes = { planned, startedAt, targetVersionId: state.targetVersionId, outcomes, nodes };
    return this.outcomes;
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
    const tally = tallyOutcomes(ctx.forwardOutcomes(state, planned, progress.startedAt).outcomes);
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
    const tally = tallyOutcomes(rollbackBatchOutcomes(state, ctx, i));
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

function rollbackBatchOutcomes(state: RolloutState, ctx: DecisionContext, index: number): NodeOutcome[] {
  const rollback = requireRollback(state);
  return (rollback.plan.batches[index]?.nodes ?? []).map(({ nodeId }) =>
    rollbackOutcome({
      node: ctx.nodes.get(nodeId),
      dispatch: entryOf(rollback.dispatches, nodeId),
      timeoutSeconds: state.strategy.defaults.timeoutSeconds,
      now: ctx.now,
    }),
  );
}

/**
 * Whether a dispatch may hold a slot of its site's budget now (budgetSlotUntil): only until its
 * timeout, or twice that while still switching. One past both holds none whatever its node
 * reports, and is passed over without looking its node up: most dispatches of a long rollout are.
 */
function mayHoldSlot(dispatchedAt: EpochMs, timeoutSeconds: number, now: EpochMs): boolean {
  const deadline = dispatchedAt + timeoutSeconds * SECOND_MS;
  return now < deadline || now < deadline + timeoutSeconds * SECOND_MS;
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
    const policy = ctx.policyOf(dispatch.batch);
    if (!mayHoldSlot(dispatch.dispatchedAt, policy.timeoutSeconds, ctx.now)) continue;
    const node = ctx.nodes.get(dispatch.nodeId);
    if (!node) continue;
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
    const { outcomes, nodes } = ctx.forwardOutcomes(state, planned, progress.startedAt);
    for (let k = 0; k < outcomes.length; k++) {
      const outcome = outcomes[k];
      // Only the ready and the waiting need anything, and both are nodes observed now.
      if (outcome !== "ready" && outcome !== "waiting_offline") continue;
      const id = planned.nodeIds[k] as string;
      const node = nodes[k];
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
  const dispatched = dispatchLookup(ctx.state.dispatches);
  for (const node of ctx.nodes.values()) {
    // The field tests first: most nodes of a rollout half-way are on the version already.
    if (
      !node.inTarget ||
      node.currentVersionId === state.targetVersionId ||
      dispatched(node.id) !== undefined
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
  const dispatched = (nodeId: string) => positionIn(rollback.dispatches, nodeId) >= 0;
  const timeoutSeconds = state.strategy.defaults.timeoutSeconds;
  for (const dispatch of rollback.dispatches) {
    if (!mayHoldSlot(dispatch.dispatchedAt, timeoutSeconds, ctx.now)) continue;
    const node = ctx.nodes.get(dispatch.nodeId);
    if (!node) continue;
    const outcome = rollbackOutcome({ node, dispatch, timeoutSeconds, now: ctx.now });
    const slotUntil = budgetSlotUntil(outcome, node, dispatch.dispatchedAt, timeoutSeconds, ctx.now);
    if (slotUntil !== null) dispatcher.countUpdating(node, slotUntil);
  }
  // Forward updates still in flight (a batch fails before its slow nodes are done; a timed-out
  // node may still be switching) hold their site's budget until the rollback sends them back.
  for (const dispatch of state.dispatches) {
    const policy = ctx.policyOf(dispatch.batch);
    if (!mayHoldSlot(dispatch.dispatchedAt, policy.timeoutSeconds, ctx.now)) continue;
    const node = ctx.nodes.get(dispatch.nodeId);
    if (!node || dispatched(dispatch.nodeId)) continue;
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
      if (!node || dispatched(target.nodeId)) continue;
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
