/**
 * What people do to a rollout, as pure transitions: start, pause, resume, approve, abort, roll
 * back. An action that makes no sense in the rollout's status is refused with a typed error
 * that says why and what is possible instead; a refused action changes nothing. Who may act
 * (roles) is the API's business.
 */
import type { TargetNode } from "./nodes";
import { planRollout } from "./plan";
import { planRollback } from "./rollback";
import type { RolloutState, RolloutStatus } from "./state";
import type { EpochMs } from "./time";

export type RolloutAction =
  /** `nodes`: the target as it is now; the plan is made from it and frozen. */
  | { type: "start"; nodes: readonly TargetNode[] }
  | { type: "pause"; note?: string }
  /** Paused: go on. Failed: accept the failed batch and go on with the next one. */
  | { type: "resume" }
  | { type: "approve" }
  /** Stop for good; nodes stay on whatever version they run. */
  | { type: "abort"; note?: string }
  /** Every node the rollout dispatched goes back to the version it ran before. */
  | { type: "rollback"; note?: string };

export type RolloutActionType = RolloutAction["type"];
export const ROLLOUT_ACTION_TYPES: readonly RolloutActionType[] = [
  "start",
  "pause",
  "resume",
  "approve",
  "abort",
  "rollback",
];

export interface ActionRefusal {
  code: "action_not_allowed";
  action: RolloutActionType;
  status: RolloutStatus;
  /** Says why, and which actions are possible instead. */
  message: string;
}

export type ActionResult = { ok: true; state: RolloutState } | { ok: false; error: ActionRefusal };

const ALLOWED_IN: Record<RolloutActionType, readonly RolloutStatus[]> = {
  start: ["pending"],
  pause: ["running"],
  resume: ["paused", "failed"],
  approve: ["awaiting_approval"],
  abort: ["pending", "running", "paused", "awaiting_approval", "failed", "rolling_back"],
  rollback: ["running", "paused", "awaiting_approval", "failed", "completed", "cancelled"],
};

const STATUS_WORDS: Record<RolloutStatus, string> = {
  pending: "has not started",
  running: "is running",
  paused: "is paused",
  awaiting_approval: "waits for approval",
  failed: "is halted by a failed batch",
  completed: "has completed",
  cancelled: "was aborted",
  rolling_back: "is rolling back",
  rolled_back: "was rolled back",
};

/** Whether each action is possible now, and if not, why (the console disables buttons with it). */
export function actionAvailability(
  state: Pick<RolloutState, "status" | "plan">,
): Record<RolloutActionType, { allowed: true } | { allowed: false; reason: string }> {
  const result = {} as Record<RolloutActionType, { allowed: true } | { allowed: false; reason: string }>;
  for (const action of ROLLOUT_ACTION_TYPES) {
    const refusal = refusalFor(state, action);
    result[action] = refusal ? { allowed: false, reason: refusal.message } : { allowed: true };
  }
  return result;
}

function refusalFor(
  state: Pick<RolloutState, "status" | "plan">,
  action: RolloutActionType,
): ActionRefusal | null {
  const { status } = state;
  let why: string | null = null;
  if (!ALLOWED_IN[action].includes(status)) {
    const possible = ROLLOUT_ACTION_TYPES.filter(
      (a) => ALLOWED_IN[a].includes(status) && !(a === "rollback" && state.plan === null),
    );
    why = `cannot ${action}: the rollout ${STATUS_WORDS[status]}${possible.length > 0 ? ` (possible now: ${possible.join(", ")})` : ""}`;
  } else if (action === "rollback" && state.plan === null) {
    why = "cannot rollback: the rollout never started, so it changed no node";
  }
  return why === null ? null : { code: "action_not_allowed", action, status, message: why };
}

export function applyAction(state: RolloutState, action: RolloutAction, now: EpochMs): ActionResult {
  const refusal = refusalFor(state, action.type);
  if (refusal) return { ok: false, error: refusal };
  const moved = (
    status: RolloutStatus,
    reason: string | null,
    change: Partial<RolloutState> = {},
  ): ActionResult => ({
    ok: true,
    state: { ...state, ...change, status, statusReason: reason, statusChangedAt: now },
  });
  const last = state.batches.length - 1;
  switch (action.type) {
    case "start": {
      const plan = planRollout({
        nodes: action.nodes,
        strategy: state.strategy,
        targetVersionId: state.targetVersionId,
        now,
      });
      return moved("running", null, { plan, batches: [] });
    }
    case "pause":
      return moved("paused", note("paused by a person", action.note));
    case "resume":
      if (state.status === "failed" && last >= 0) {
        const batches = state.batches.map((b, i) => (i === last ? { ...b, failureAcceptedAt: now } : b));
        return moved("running", `resumed past the failure of batch ${last}`, { batches });
      }
      return moved("running", "resumed");
    case "approve": {
      const batches = state.batches.map((b, i) => (i === last ? { ...b, approvedAt: now } : b));
      return moved("running", `batch ${last + 1} approved`, { batches });
    }
    case "abort":
      return moved("cancelled", note("aborted by a person; nodes stay on the version they run", action.note));
    case "rollback": {
      const reason = note("rollback requested by a person", action.note);
      return moved("rolling_back", reason, {
        rollback: { startedAt: now, reason, plan: planRollback(state), batches: [], dispatches: [] },
      });
    }
  }
}

function note(what: string, text: string | undefined): string {
  const trimmed = text?.trim();
  return trimmed ? `${what}: ${trimmed}` : what;
}
