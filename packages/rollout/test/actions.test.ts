import { describe, expect, it } from "vitest";
import {
  actionAvailability,
  applyAction,
  newRolloutState,
  ROLLOUT_ACTION_TYPES,
  ROLLOUT_STATUSES,
  type RolloutAction,
  type RolloutActionType,
  type RolloutState,
  type RolloutStatus,
} from "../src";
import { NEW, nodes, started, strategy, T0 } from "./fixtures";

const actionOf = (type: RolloutActionType): RolloutAction =>
  type === "start" ? { type, nodes: nodes(3) } : ({ type } as RolloutAction);

/** A rollout in `status` (started unless pending, so that it has a plan). */
function inStatus(status: RolloutStatus): RolloutState {
  const base =
    status === "pending"
      ? newRolloutState(NEW, strategy({ batches: [{ count: 1 }] }))
      : started(nodes(3), { batches: [{ count: 1 }] });
  return { ...base, status };
}

/** Which statuses allow which action: the whole table, so a change to it is a visible decision. */
const EXPECTED: Record<RolloutActionType, RolloutStatus[]> = {
  start: ["pending"],
  pause: ["running"],
  resume: ["paused", "failed"],
  approve: ["awaiting_approval"],
  abort: ["pending", "running", "paused", "awaiting_approval", "failed", "rolling_back"],
  rollback: ["running", "paused", "awaiting_approval", "failed", "completed", "cancelled"],
};

describe("applyAction", () => {
  for (const type of ROLLOUT_ACTION_TYPES) {
    for (const status of ROLLOUT_STATUSES) {
      const allowed = EXPECTED[type].includes(status);
      it(`${type} on a ${status} rollout is ${allowed ? "allowed" : "refused with the reason"}`, () => {
        const state = inStatus(status);
        const result = applyAction(state, actionOf(type), T0 + 1000);
        expect(result.ok).toBe(allowed);
        expect(actionAvailability(state)[type].allowed).toBe(allowed);
        if (!result.ok) {
          expect(result.error).toMatchObject({ code: "action_not_allowed", action: type, status });
          expect(result.error.message).toMatch(new RegExp(`^cannot ${type}: the rollout `));
          const reason = actionAvailability(state)[type];
          expect(!reason.allowed && reason.reason).toBe(result.error.message);
        } else {
          expect(result.state.statusChangedAt).toBe(T0 + 1000);
        }
      });
    }
  }

  it("refused actions name what is possible instead", () => {
    const result = applyAction(inStatus("completed"), { type: "pause" }, T0);
    expect(!result.ok && result.error.message).toBe(
      "cannot pause: the rollout has completed (possible now: rollback)",
    );
    const finished = applyAction(inStatus("rolled_back"), { type: "abort" }, T0);
    expect(!finished.ok && finished.error.message).toBe("cannot abort: the rollout was rolled back");
  });

  it("a rollout aborted before it started cannot be rolled back: it changed nothing", () => {
    const aborted = {
      ...newRolloutState(NEW, strategy({ batches: [{ count: 1 }] })),
      status: "cancelled" as const,
    };
    const result = applyAction(aborted, { type: "rollback" }, T0);
    expect(!result.ok && result.error.message).toContain("never started");
  });

  it("start plans the target and freezes the plan", () => {
    const result = applyAction(inStatus("pending"), { type: "start", nodes: nodes(3) }, T0);
    expect(result.ok && result.state.status).toBe("running");
    expect(result.ok && result.state.plan?.batches.map((b) => b.nodeIds)).toEqual([
      ["n000"],
      ["n001", "n002"],
    ]);
    expect(result.ok && result.state.plan?.plannedAt).toBe(T0);
  });

  it("pause and abort keep the person's note; abort leaves nodes as they are", () => {
    const paused = applyAction(inStatus("running"), { type: "pause", note: "  wait for the vendor " }, T0);
    expect(paused.ok && paused.state.statusReason).toBe("paused by a person: wait for the vendor");
    const running = inStatus("running");
    const aborted = applyAction(running, { type: "abort" }, T0);
    expect(aborted.ok && aborted.state.status).toBe("cancelled");
    expect(aborted.ok && aborted.state.dispatches).toBe(running.dispatches);
    expect(aborted.ok && aborted.state.rollback).toBeNull();
  });

  it("a refused action changes nothing", () => {
    const state = inStatus("completed");
    const copy = structuredClone(state);
    applyAction(state, { type: "resume" }, T0);
    expect(state).toEqual(copy);
  });
});
