/**
 * What a rollout remembers between two decisions (the controller keeps it in Postgres), the
 * decisions the decider returns, and the one reducer that applies them. Everything here is plain
 * JSON-safe data: times are epoch milliseconds.
 */

import { appended, positionIn } from "./dispatch-index";
import type { BatchGateResult } from "./gates/progress";
import type { RolloutPlan } from "./plan";
import type { RolloutStrategy } from "./strategy";
import type { EpochMs } from "./time";

/**
 * Rollout statuses. `RolloutStatus` in packages/db/prisma/schema.prisma must hold the same values:
 * - `pending`: created, not started;
 * - `running`: moving batch by batch (also during a timed pause between batches);
 * - `paused`: a person paused it; nothing new is dispatched until they resume;
 * - `awaiting_approval`: a batch passed and the next one waits for a person's approval;
 * - `failed`: a batch missed its success threshold and `onBatchFailure` is "pause": halted until
 *   a person resumes (continue anyway), rolls back or aborts;
 * - `completed`: every batch is done; late joiners and returning offline nodes still get the
 *   version (continuous target) while the rollout is the app's latest;
 * - `cancelled`: aborted by a person; nodes stay as they are;
 * - `rolling_back`: every node the rollout touched goes back to the version it ran before;
 * - `rolled_back`: that is done (nodes offline during it are rolled back when they return).
 */
export const ROLLOUT_STATUSES = [
  "pending",
  "running",
  "paused",
  "awaiting_approval",
  "failed",
  "completed",
  "cancelled",
  "rolling_back",
  "rolled_back",
] as const;
export type RolloutStatus = (typeof ROLLOUT_STATUSES)[number];

/** Statuses after which a rollout makes no more batch progress (only catch-up of returning nodes). */
export const FINISHED_STATUSES: readonly RolloutStatus[] = ["completed", "cancelled", "rolled_back"];

/** How a batch's nodes ended (frozen when the batch finishes) or stand (live). */
export interface BatchTally {
  /** Nodes in the batch. */
  nodes: number;
  /** Reached `running` on the version. */
  succeeded: number;
  /** Reported `failed` after being dispatched. */
  failed: number;
  /** Did not reach `running` within the timeout while online. */
  timedOut: number;
  /** Offline, and the offline policy counts that as a failure. */
  failedOffline: number;
  /** Offline, and the offline policy skips them: not counted; they get the version when they return. */
  skippedOffline: number;
  /** Were on the version already. Not counted. */
  alreadyCurrent: number;
  /** Left the target (or the inventory) before being dispatched. Not counted. */
  left: number;
  /** Not finished yet: waiting (window, budget, offline) or updating. */
  inProgress: number;
}

export interface BatchProgress {
  startedAt: EpochMs;
  finishedAt: EpochMs | null;
  verdict: "succeeded" | "failed" | null;
  /** Frozen at finish. */
  tally: BatchTally | null;
  /** Why the verdict is what it is (shown on the rollout page). */
  reason: string | null;
  /** A person approved the next batch (pause `approval`). */
  approvedAt: EpochMs | null;
  /** A person resumed past this batch's failure: the rollout goes on as if it had passed. */
  failureAcceptedAt: EpochMs | null;
  /**
   * Its metric gates' outcome, once judged (gates/progress.ts); absent or null while not judged
   * or without gates. Optional: states stored before gates have none.
   */
  gates?: BatchGateResult | null;
}

/** One node the rollout moved to its version. Written once: a node is never dispatched twice. */
export interface NodeDispatch {
  nodeId: string;
  /** Its planned batch; null for a node that was not in the plan (late joiner). */
  batch: number | null;
  /** Dispatched after its batch was over (returning offline node) or as a late joiner. */
  catchUp: boolean;
  /** The version it ran before (null: none): where a rollback sends it. */
  fromVersionId: string | null;
  toVersionId: string;
  dispatchedAt: EpochMs;
}

export interface RollbackTarget {
  nodeId: string;
  /** The version it goes back to; null: the app is removed from the node (it had none before). */
  toVersionId: string | null;
}

export interface RollbackPlan {
  /** One batch per forward batch that touched nodes, in the same order; late joiners last. */
  batches: { index: number; forwardBatch: number | null; nodes: RollbackTarget[] }[];
}

export interface RollbackDispatch {
  nodeId: string;
  toVersionId: string | null;
  dispatchedAt: EpochMs;
}

export interface RollbackProgress {
  startedAt: EpochMs;
  reason: string;
  plan: RollbackPlan;
  batches: BatchProgress[];
  dispatches: RollbackDispatch[];
}

/** The persistent state of one rollout. */
export interface RolloutState {
  status: RolloutStatus;
  /** Why it is in this status (a person's note, the failed batch, ...). */
  statusReason: string | null;
  statusChangedAt: EpochMs | null;
  targetVersionId: string;
  strategy: RolloutStrategy;
  /** Frozen when the rollout starts; null while pending. */
  plan: RolloutPlan | null;
  /** Progress of the plan's batches, in order; batch i is started iff i < batches.length. */
  batches: BatchProgress[];
  dispatches: NodeDispatch[];
  rollback: RollbackProgress | null;
}

/** A rollout that was just created. */
export function newRolloutState(targetVersionId: string, strategy: RolloutStrategy): RolloutState {
  return {
    status: "pending",
    statusReason: null,
    statusChangedAt: null,
    targetVersionId,
    strategy,
    plan: null,
    batches: [],
    dispatches: [],
    rollback: null,
  };
}

export type Phase = "forward" | "rollback";

export interface DispatchedNode {
  nodeId: string;
  fromVersionId: string | null;
  /** null: remove the app from the node (rollback of a node that had no version before). */
  toVersionId: string | null;
}

/** Why something waits. Waits for a person have no `until`; all others have one. */
export type WaitReason =
  | "not_started"
  | "paused"
  | "halted_by_failure"
  | "approval"
  | "timed_pause"
  | "maintenance_window"
  | "disruption_budget"
  | "offline"
  | "offline_until_return"
  | "late_joiner"
  | "updating"
  | "gates";

export type Decision =
  | { kind: "start_batch"; phase: Phase; batch: number; at: EpochMs }
  | {
      kind: "finish_batch";
      phase: Phase;
      batch: number;
      verdict: "succeeded" | "failed";
      tally: BatchTally;
      reason: string;
      at: EpochMs;
    }
  | {
      /**
       * Commit these nodes' desired version now. `purpose`: a node of the running batch, a
       * catch-up (returning or late node), or a rollback.
       */
      kind: "dispatch";
      purpose: "batch" | "catch_up" | "rollback";
      /** The planned batch (forward) or rollback batch; null for late joiners. */
      batch: number | null;
      nodes: DispatchedNode[];
      at: EpochMs;
    }
  | { kind: "set_status"; status: RolloutStatus; reason: string; at: EpochMs }
  | { kind: "start_rollback"; plan: RollbackPlan; reason: string; at: EpochMs }
  | {
      /**
       * Nothing to do for these nodes (or for the rollout) now, and why. `until`: the instant at
       * which, even without any new report, this is judged again (a window opens, a timeout runs
       * out, a pause ends); null when only a person or the node itself can end it.
       */
      kind: "wait";
      reason: WaitReason;
      message: string;
      until: EpochMs | null;
      nodeIds: string[];
      /** For waits of one site (window, budget). */
      siteId?: string | null;
    };

/**
 * Applies decisions to the state, the way the controller persists them. Idempotent: a decision
 * already applied changes nothing (a node is never dispatched twice, a batch never restarted),
 * so a controller that crashed half-way may apply the same list again.
 */
export function applyDecisions(state: RolloutState, decisions: readonly Decision[]): RolloutState {
  return decisions.reduce(applyDecision, state);
}

export function applyDecision(state: RolloutState, decision: Decision): RolloutState {
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

/**
 * Whether a node was dispatched already is looked up in the dispatch list's index (kept per list,
 * dispatch-index.ts), not in a Set of every dispatch built per decision: the grown list shares the
 * index, so a step's cost follows the nodes it dispatches, not those dispatched before.
 */
function applyDispatch(state: RolloutState, decision: Extract<Decision, { kind: "dispatch" }>): RolloutState {
  if (decision.purpose === "rollback") {
    if (!state.rollback) return state;
    const before = state.rollback.dispatches;
    const done = new Set<string>();
    const added: RollbackDispatch[] = [];
    for (const node of decision.nodes) {
      if (done.has(node.nodeId) || positionIn(before, node.nodeId) >= 0) continue;
      done.add(node.nodeId);
      added.push({ nodeId: node.nodeId, toVersionId: node.toVersionId, dispatchedAt: decision.at });
    }
    if (added.length === 0) return state;
    return {
      ...state,
      rollback: { ...state.rollback, dispatches: appended(before, added) },
    };
  }
  const done = new Set<string>();
  const added: NodeDispatch[] = [];
  for (const node of decision.nodes) {
    if (node.toVersionId === null || done.has(node.nodeId) || positionIn(state.dispatches, node.nodeId) >= 0)
      continue;
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
  return { ...state, dispatches: appended(state.dispatches, added) };
}
