/**
 * Where metric gates meet the rollout's state machine, pure: when a batch's gates are due, how
 * their outcome is recorded, and what the rollout does with it. The controller does the I/O in
 * between (queries Mimir, judges with judge.ts) and records the result; the decider reads it.
 *
 * A batch with gates that met its success threshold (every node running: `finishedAt`) is
 * watched for its gates' longest window; then the controller judges it. Until the result is
 * recorded the rollout waits (`gates`, until the window's end), dispatching no further batch.
 * `pass` goes on as before (pause, approval, next batch, completion); `fail` and `inconclusive`
 * do what the strategy's `gateActions` say: roll back, pause (status `failed`: a person resumes
 * past it, rolls back or aborts) or, for inconclusive only, continue.
 */
import type { BatchProgress, RolloutState } from "../state";
import type { EpochMs } from "../time";
import type { BatchGateOutcome } from "./judge";
import { type Gate, gateActionsOf, gateWindowSeconds } from "./spec";

/** A batch's gates' outcome as the rollout state keeps it (the numbers are stored beside it). */
export interface BatchGateResult {
  outcome: BatchGateOutcome;
  reason: string;
  /** The window judged: from the batch's nodes all running to the end of the longest window. */
  windowStart: EpochMs;
  windowEnd: EpochMs;
  evaluatedAt: EpochMs;
}

/** The gates a batch is judged on: its plan's policy (frozen at start). */
export function batchGates(state: RolloutState, batch: number): Gate[] {
  return state.plan?.batches[batch]?.policy.gates ?? [];
}

/** When a finished batch's gates can be judged: the end of their longest window. */
export function gatesWindowEnd(progress: BatchProgress, gates: readonly Gate[]): EpochMs | null {
  if (progress.finishedAt === null || gates.length === 0) return null;
  return progress.finishedAt + gateWindowSeconds(gates) * 1000;
}

/**
 * Whether a batch still waits for its gates: it succeeded on install, has gates and no recorded
 * result. (A failed batch is not judged on metrics: it already failed.)
 */
export function awaitsGates(state: RolloutState, batch: number): boolean {
  const progress = state.batches[batch];
  return (
    progress !== undefined &&
    progress.finishedAt !== null &&
    progress.verdict === "succeeded" &&
    batchGates(state, batch).length > 0 &&
    (progress.gates ?? null) === null
  );
}

export interface DueGates {
  batch: number;
  gates: Gate[];
  windowStart: EpochMs;
  windowEnd: EpochMs;
}

/** The batch whose gates the controller must judge now, if any (a running rollout only). */
export function gatesDue(state: RolloutState, now: EpochMs): DueGates | null {
  if (state.status !== "running") return null;
  const batch = state.batches.length - 1;
  if (batch < 0 || !awaitsGates(state, batch)) return null;
  const progress = state.batches[batch] as BatchProgress;
  const gates = batchGates(state, batch);
  const windowEnd = gatesWindowEnd(progress, gates) as EpochMs;
  if (now < windowEnd) return null;
  return { batch, gates, windowStart: progress.finishedAt as EpochMs, windowEnd };
}

/** Records a batch's gate result; idempotent (a result already recorded stays). */
export function recordGateResult(state: RolloutState, batch: number, result: BatchGateResult): RolloutState {
  const progress = state.batches[batch];
  if (!progress || (progress.gates ?? null) !== null) return state;
  return { ...state, batches: state.batches.map((b, i) => (i === batch ? { ...b, gates: result } : b)) };
}

/**
 * What the rollout does after a finished batch's gates: `wait` (not judged yet), `go` (passed,
 * or a person resumed past it), `pause` or `rollback`.
 */
export function gateStep(
  state: RolloutState,
  batch: number,
): { kind: "go" } | { kind: "wait"; until: EpochMs } | { kind: "pause" | "rollback"; reason: string } {
  const progress = state.batches[batch];
  if (progress?.verdict !== "succeeded" || batchGates(state, batch).length === 0) return { kind: "go" };
  const result = progress.gates ?? null;
  if (result === null) {
    return { kind: "wait", until: gatesWindowEnd(progress, batchGates(state, batch)) as EpochMs };
  }
  if (result.outcome === "pass" || progress.failureAcceptedAt !== null) return { kind: "go" };
  const actions = gateActionsOf(state.strategy);
  const action = result.outcome === "fail" ? actions.onFail : actions.onInconclusive;
  if (action === "continue") return { kind: "go" };
  return { kind: action, reason: `batch ${batch}'s metric gates: ${result.outcome}: ${result.reason}` };
}
