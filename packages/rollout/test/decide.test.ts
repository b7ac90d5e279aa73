import { describe, expect, it } from "vitest";
import {
  applyAction,
  applyDecisions,
  type Decision,
  decideRollout,
  newRolloutState,
  nextWakeUp,
  type ObservedNode,
  RolloutInputError,
  type RolloutState,
  type RolloutStrategyInput,
  rolloutView,
  type TargetNode,
} from "../src";
import { failed, NEW, node, nodes, OLD, observe, running, started, strategy, T0 } from "./fixtures";

const MIN = 60_000;

/** Decides and applies, like the controller. */
function step(state: RolloutState, observed: ObservedNode[], now: number) {
  const decisions = decideRollout(state, observed, now);
  return { decisions, state: applyDecisions(state, decisions) };
}

const kinds = (decisions: Decision[]) =>
  decisions.map((d) => (d.kind === "wait" ? `wait:${d.reason}` : d.kind));
const dispatched = (decisions: Decision[], purpose?: string) =>
  decisions.flatMap((d) =>
    d.kind === "dispatch" && (!purpose || d.purpose === purpose) ? d.nodes.map((n) => n.nodeId) : [],
  );
const waitOf = (decisions: Decision[], reason: string) =>
  decisions.find((d): d is Extract<Decision, { kind: "wait" }> => d.kind === "wait" && d.reason === reason);

function act(state: RolloutState, action: Parameters<typeof applyAction>[1], now: number): RolloutState {
  const result = applyAction(state, action, now);
  if (!result.ok) throw new Error(result.error.message);
  return result.state;
}

/** Start a rollout of `targets` and dispatch its first batch. */
function begin(
  targets: TargetNode[],
  input: RolloutStrategyInput,
  observed = targets.map((n) => observe(n)),
) {
  return step(started(targets, input), observed, T0);
}

describe("decideRollout: batches", () => {
  it("a pending rollout waits for a person to start it", () => {
    const decisions = decideRollout(newRolloutState(NEW, strategy({ batches: [{ count: 1 }] })), [], T0);
    expect(decisions).toEqual([
      {
        kind: "wait",
        reason: "not_started",
        message: expect.stringContaining("start"),
        until: null,
        nodeIds: [],
      },
    ]);
  });

  it("starts the first batch and dispatches its online nodes, recording where they came from", () => {
    const targets = nodes(4);
    const { decisions, state } = begin(targets, { batches: [{ count: 2 }] });
    expect(kinds(decisions)).toEqual(["start_batch", "dispatch", "wait:updating"]);
    expect(decisions[1]).toEqual({
      kind: "dispatch",
      purpose: "batch",
      batch: 0,
      at: T0,
      nodes: [
        { nodeId: "n000", fromVersionId: OLD, toVersionId: NEW },
        { nodeId: "n001", fromVersionId: OLD, toVersionId: NEW },
      ],
    });
    expect(state.dispatches.map((d) => [d.nodeId, d.batch, d.fromVersionId, d.dispatchedAt])).toEqual([
      ["n000", 0, OLD, T0],
      ["n001", 0, OLD, T0],
    ]);
  });

  it("while nodes update, it waits and says until when (the first timeout)", () => {
    const targets = nodes(2);
    const first = begin(targets, { batches: [{ count: 2, timeoutSeconds: 600 }] });
    const decisions = decideRollout(
      first.state,
      targets.map((n) => observe(n)),
      T0 + MIN,
    );
    expect(decisions).toEqual([
      {
        kind: "wait",
        reason: "updating",
        nodeIds: ["n000", "n001"],
        until: T0 + 600_000,
        message: expect.stringContaining("2 node(s) updating"),
      },
    ]);
    expect(nextWakeUp(decisions)).toBe(T0 + 600_000);
  });

  it("when a batch's nodes run the version, it finishes the batch and starts the next in one step", () => {
    const targets = nodes(4);
    const first = begin(targets, { batches: [{ count: 2 }] });
    const observed = [
      running(targets[0] as TargetNode, NEW, T0 + MIN),
      running(targets[1] as TargetNode, NEW, T0 + MIN),
      observe(targets[2] as TargetNode),
      observe(targets[3] as TargetNode),
    ];
    const { decisions, state } = step(first.state, observed, T0 + 2 * MIN);
    expect(kinds(decisions)).toEqual(["finish_batch", "start_batch", "dispatch", "wait:updating"]);
    expect(decisions[0]).toMatchObject({
      verdict: "succeeded",
      tally: { nodes: 2, succeeded: 2, inProgress: 0 },
    });
    expect(dispatched(decisions)).toEqual(["n002", "n003"]);
    // The last batch done: completed.
    const done = step(
      state,
      targets.map((n) => running(n, NEW, T0 + 3 * MIN)),
      T0 + 3 * MIN,
    );
    expect(kinds(done.decisions)).toEqual(["finish_batch", "set_status"]);
    expect(done.state.status).toBe("completed");
  });

  it("nodes already on the version are counted, not dispatched; an all-current target completes at once", () => {
    const targets = [node("a"), node("b", { currentVersionId: NEW })];
    const { decisions } = begin(targets, { batches: [{ count: 5 }] });
    expect(dispatched(decisions)).toEqual(["a"]);
    const allCurrent = [node("a", { currentVersionId: NEW })];
    const result = begin(allCurrent, { batches: [{ count: 1 }] });
    expect(result.state.status).toBe("completed");
    expect(result.state.statusReason).toContain("nothing to update");
  });

  it("a node that reached the version by other means before its turn is counted as already current", () => {
    const targets = nodes(2);
    const first = begin(targets, { batches: [{ count: 1 }] });
    const observed = [running(targets[0] as TargetNode, NEW, T0), running(targets[1] as TargetNode, NEW, T0)];
    const { decisions } = step(first.state, observed, T0 + MIN);
    expect(dispatched(decisions)).toEqual([]);
    const finishes = decisions.filter((d) => d.kind === "finish_batch");
    expect(finishes.map((d) => d.kind === "finish_batch" && d.tally.alreadyCurrent)).toEqual([0, 1]);
  });

  it("a node that left the target before its turn is not dispatched and not counted", () => {
    const targets = nodes(3);
    const first = begin(targets, { batches: [{ count: 1 }] });
    const observed = [
      running(targets[0] as TargetNode, NEW, T0),
      observe(targets[1] as TargetNode, { inTarget: false }),
      observe(targets[2] as TargetNode),
    ];
    const { decisions } = step(first.state, observed, T0 + MIN);
    expect(dispatched(decisions)).toEqual(["n002"]);
  });
});

describe("decideRollout: success threshold and failure", () => {
  const targets = nodes(8);
  const input = (extra: Partial<RolloutStrategyInput> = {}): RolloutStrategyInput => ({
    batches: [{ count: 4, successThreshold: 75 }],
    ...extra,
  });

  it("tolerates failures within the threshold", () => {
    const first = begin(targets, input());
    const observed = targets.map((n, i) =>
      i === 0 ? failed(n, T0 + MIN) : i < 4 ? running(n, NEW, T0 + MIN) : observe(n),
    );
    const { decisions } = step(first.state, observed, T0 + 2 * MIN);
    expect(decisions[0]).toMatchObject({
      kind: "finish_batch",
      verdict: "succeeded",
      tally: { failed: 1, succeeded: 3 },
    });
  });

  it("fails a batch as soon as the threshold cannot be met, and halts (onBatchFailure: pause)", () => {
    const first = begin(targets, input());
    // Two of four failed, two still updating: even if both succeed, 50% < 75%.
    const observed = targets.map((n, i) => (i < 2 ? failed(n, T0 + MIN) : observe(n)));
    const { decisions, state } = step(first.state, observed, T0 + 2 * MIN);
    expect(kinds(decisions)).toEqual(["finish_batch", "set_status", "wait:halted_by_failure"]);
    expect(decisions[0]).toMatchObject({
      verdict: "failed",
      reason: expect.stringContaining("can no longer be met"),
    });
    expect(state.status).toBe("failed");
    expect(state.statusReason).toContain("batch 0 failed");
    // Halted: nothing more is dispatched, whatever happens.
    expect(
      dispatched(
        decideRollout(
          state,
          targets.map((n) => observe(n)),
          T0 + 60 * MIN,
        ),
      ),
    ).toEqual([]);
  });

  it("a failure reported before the dispatch does not count against it", () => {
    const first = begin(targets, input());
    const observed = targets.map((n, i) => (i < 2 ? failed(n, T0 - MIN) : observe(n)));
    const { decisions } = step(first.state, observed, T0 + MIN);
    expect(kinds(decisions)).toEqual(["wait:updating"]);
  });

  it("counts a node that does not reach running in time as timed out", () => {
    const first = begin(
      targets,
      input({ batches: [{ count: 4, timeoutSeconds: 60, successThreshold: 100 }] }),
    );
    const observed = targets.map((n, i) => (i < 3 ? running(n, NEW, T0 + 10_000) : observe(n)));
    expect(kinds(decideRollout(first.state, observed, T0 + 59_000))).toEqual(["wait:updating"]);
    const { decisions } = step(first.state, observed, T0 + 60_000);
    expect(decisions[0]).toMatchObject({
      kind: "finish_batch",
      verdict: "failed",
      tally: { timedOut: 1, succeeded: 3 },
    });
  });

  it("rolls back automatically when asked to (onBatchFailure: rollback)", () => {
    const first = begin(targets, input({ onBatchFailure: "rollback" }));
    const observed = targets.map((n, i) =>
      i < 2 ? failed(n, T0 + MIN) : i < 4 ? running(n, NEW, T0 + MIN) : observe(n),
    );
    const { decisions, state } = step(first.state, observed, T0 + 2 * MIN);
    expect(kinds(decisions)).toEqual([
      "finish_batch",
      "start_rollback",
      "start_batch",
      "dispatch",
      "wait:updating",
    ]);
    expect(state.status).toBe("rolling_back");
    expect(decisions[3]).toMatchObject({
      purpose: "rollback",
      nodes: [0, 1, 2, 3].map((i) => ({ nodeId: `n00${i}`, toVersionId: OLD })),
    });
  });

  it("resuming a failed rollout accepts the failure and starts the next batch at once", () => {
    const first = begin(
      targets,
      input({ batches: [{ count: 4, successThreshold: 100, pauseAfter: "approval" }, { count: 2 }] }),
    );
    const observed = targets.map((n, i) =>
      i === 0 ? failed(n, T0 + MIN) : i < 4 ? running(n, NEW, T0 + MIN) : observe(n),
    );
    const halted = step(first.state, observed, T0 + 2 * MIN).state;
    expect(halted.status).toBe("failed");
    const resumed = act(halted, { type: "resume" }, T0 + 3 * MIN);
    const { decisions } = step(resumed, observed, T0 + 3 * MIN);
    expect(kinds(decisions)).toEqual(["start_batch", "dispatch", "wait:updating"]);
    expect(dispatched(decisions)).toEqual(["n004", "n005"]);
  });
});

describe("decideRollout: offline nodes", () => {
  const targets = [node("a"), node("b"), node("c", { online: false }), node("d")];
  const batch = (offline: "skip" | "wait" | "fail", extra = {}): RolloutStrategyInput => ({
    batches: [{ count: 3, offline, waitSeconds: 300, ...extra }],
  });
  const observedWith = (online: boolean, report = false) =>
    targets.map((n) =>
      n.id === "c" ? observe(n, { online }) : report && n.id !== "d" ? running(n, NEW, T0 + MIN) : observe(n),
    );

  it("skip: not dispatched, not counted; the batch goes on; the node gets the version when it returns", () => {
    const first = begin(targets, batch("skip"), observedWith(false));
    expect(dispatched(first.decisions)).toEqual(["a", "b"]);
    const next = step(first.state, observedWith(false, true), T0 + 2 * MIN);
    expect(next.decisions[0]).toMatchObject({
      kind: "finish_batch",
      verdict: "succeeded",
      tally: { skippedOffline: 1, succeeded: 2 },
    });
    expect(waitOf(next.decisions, "offline_until_return")?.nodeIds).toEqual(["c"]);
    // c returns while the last batch runs: caught up, in its own planned batch.
    const back = step(next.state, observedWith(true, true), T0 + 3 * MIN);
    expect(back.decisions.find((d) => d.kind === "dispatch" && d.purpose === "catch_up")).toMatchObject({
      batch: 0,
      nodes: [{ nodeId: "c" }],
    });
    expect(back.state.dispatches.find((d) => d.nodeId === "c")).toMatchObject({ catchUp: true, batch: 0 });
  });

  it("fail: counted as failed in its batch", () => {
    const first = begin(targets, batch("fail", { successThreshold: 50 }), observedWith(false));
    expect(dispatched(first.decisions)).toEqual(["a", "b"]);
    const next = step(first.state, observedWith(false, true), T0 + 2 * MIN);
    expect(next.decisions[0]).toMatchObject({
      verdict: "succeeded",
      tally: { failedOffline: 1, succeeded: 2 },
    });
  });

  it("fail: with every node required, one offline node fails the batch before anything is dispatched", () => {
    const first = begin(targets, batch("fail"), observedWith(false));
    expect(kinds(first.decisions)).toEqual([
      "start_batch",
      "finish_batch",
      "set_status",
      "wait:halted_by_failure",
    ]);
    expect(first.decisions[1]).toMatchObject({
      verdict: "failed",
      tally: { failedOffline: 1, inProgress: 2 },
    });
  });

  it("wait: the batch waits until the deadline, then counts the node by afterWait", () => {
    const first = begin(targets, batch("wait", { afterWait: "fail" }), observedWith(false));
    const wait = waitOf(first.decisions, "offline");
    expect(wait).toMatchObject({ nodeIds: ["c"], until: T0 + 300_000 });
    expect(wait?.message).toContain("counts them as failed");
    const before = step(first.state, observedWith(false, true), T0 + 299_000);
    expect(kinds(before.decisions)).toEqual(["wait:offline"]);
    const after = step(first.state, observedWith(false, true), T0 + 300_000);
    expect(after.decisions[0]).toMatchObject({ verdict: "failed", tally: { failedOffline: 1 } });
  });

  it("wait: a node that comes back before the deadline is dispatched in its batch", () => {
    const first = begin(targets, batch("wait"), observedWith(false));
    const back = step(first.state, observedWith(true, true), T0 + 2 * MIN);
    expect(back.decisions.find((d) => d.kind === "dispatch")).toMatchObject({
      purpose: "batch",
      nodes: [{ nodeId: "c" }],
    });
  });

  it("a dispatched node that goes offline is judged at its timeout by the offline policy", () => {
    const first = begin(targets, batch("skip", { timeoutSeconds: 60 }), observedWith(true));
    const observed = targets.map((n) =>
      n.id === "a" ? observe(n, { online: false }) : n.id === "d" ? observe(n) : running(n, NEW, T0 + 1000),
    );
    const next = step(first.state, observed, T0 + 60_000);
    expect(next.decisions[0]).toMatchObject({
      verdict: "succeeded",
      tally: { skippedOffline: 1, succeeded: 2 },
    });
  });
});

describe("decideRollout: pauses", () => {
  const targets = nodes(4);
  const passFirst = (input: RolloutStrategyInput) => {
    const first = begin(targets, input);
    const observed = targets.map((n, i) => (i < 2 ? running(n, NEW, T0 + MIN) : observe(n)));
    return { observed, ...step(first.state, observed, T0 + 2 * MIN) };
  };

  it("timed: the next batch starts when the pause is over, and the wait says when", () => {
    const { decisions, state, observed } = passFirst({
      batches: [{ count: 2, pauseAfter: { seconds: 600 } }],
    });
    expect(kinds(decisions)).toEqual(["finish_batch", "wait:timed_pause"]);
    expect(waitOf(decisions, "timed_pause")?.until).toBe(T0 + 2 * MIN + 600_000);
    expect(kinds(decideRollout(state, observed, T0 + 2 * MIN + 599_000))).toEqual(["wait:timed_pause"]);
    expect(kinds(decideRollout(state, observed, T0 + 2 * MIN + 600_000))).toEqual([
      "start_batch",
      "dispatch",
      "wait:updating",
    ]);
  });

  it("approval: waits for a person; approving starts the next batch", () => {
    const { decisions, state, observed } = passFirst({ batches: [{ count: 2, pauseAfter: "approval" }] });
    expect(kinds(decisions)).toEqual(["finish_batch", "set_status", "wait:approval"]);
    expect(state.status).toBe("awaiting_approval");
    expect(kinds(decideRollout(state, observed, T0 + 100 * MIN))).toEqual(["wait:approval"]);
    const approved = act(state, { type: "approve" }, T0 + 100 * MIN);
    expect(approved.batches[0]?.approvedAt).toBe(T0 + 100 * MIN);
    expect(kinds(decideRollout(approved, observed, T0 + 100 * MIN))).toEqual([
      "start_batch",
      "dispatch",
      "wait:updating",
    ]);
  });

  it("paused by a person: no dispatch, no verdict, until resumed", () => {
    const first = begin(targets, { batches: [{ count: 2 }] });
    const paused = act(first.state, { type: "pause", note: "checking logs" }, T0 + MIN);
    const observed = targets.map((n) => running(n, NEW, T0 + MIN));
    const decisions = decideRollout(paused, observed, T0 + 2 * MIN);
    expect(decisions).toEqual([
      expect.objectContaining({
        kind: "wait",
        reason: "paused",
        message: "paused by a person: checking logs",
      }),
    ]);
    const resumed = act(paused, { type: "resume" }, T0 + 3 * MIN);
    expect(kinds(decideRollout(resumed, observed, T0 + 3 * MIN))).toEqual([
      "finish_batch",
      "start_batch",
      "finish_batch",
      "set_status",
    ]);
  });
});

describe("decideRollout: maintenance windows and disruption budget", () => {
  it("a site outside its window waits, and says until when; the others go", () => {
    const targets = [
      node("berlin-1", { siteId: "berlin", siteTimeZone: "Europe/Berlin" }),
      node("ny-1", { siteId: "ny", siteTimeZone: "America/New_York" }),
    ];
    // T0 = Monday 10:00 UTC = 12:00 Berlin, 06:00 New York. Window: 01:00–07:00 local, every day.
    const { decisions } = begin(targets, {
      batches: [{ count: 2 }],
      maintenanceWindows: {
        default: [{ days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], start: "01:00", end: "07:00" }],
      },
    });
    expect(dispatched(decisions)).toEqual(["ny-1"]);
    const wait = waitOf(decisions, "maintenance_window");
    // Tuesday 01:00 in Berlin (CEST) = Monday 23:00 UTC.
    expect(wait).toMatchObject({
      siteId: "berlin",
      nodeIds: ["berlin-1"],
      until: Date.UTC(2025, 5, 2, 23, 0),
    });
    expect(wait?.message).toContain("outside its maintenance window until 2025-06-02T23:00:00.000Z");
  });

  it("keeps at most the budget of a site's nodes updating at once", () => {
    const targets = [
      ...nodes(5, ["site-a"]),
      ...nodes(2, ["site-b"]).map((n) => ({ ...n, id: `b-${n.id}` })),
    ];
    const first = begin(targets, {
      batches: [{ percent: 100, timeoutSeconds: 600 }],
      disruptionBudget: { maxUpdatingPerSite: { count: 2 } },
    });
    expect(dispatched(first.decisions).sort()).toEqual(["b-n000", "b-n001", "n000", "n001"]);
    const wait = waitOf(first.decisions, "disruption_budget");
    expect(wait).toMatchObject({ siteId: "site-a", nodeIds: ["n002", "n003", "n004"], until: T0 + 600_000 });
    // One finished: one more slot.
    const observed = targets.map((n) => (n.id === "n000" ? running(n, NEW, T0 + MIN) : observe(n)));
    expect(dispatched(decideRollout(first.state, observed, T0 + MIN))).toEqual(["n002"]);
    // Nothing finished, but a timeout ran out: the slot is free again (the node counts as timed out).
    expect(
      dispatched(
        decideRollout(
          first.state,
          targets.map((n) => observe(n)),
          T0 + 600_000,
        ),
      ),
    ).toEqual([]);
  });

  it("a node that timed out while still switching keeps its slot until it reports, goes offline or times out twice", () => {
    const targets = nodes(3);
    const first = begin(targets, {
      batches: [{ percent: 100, timeoutSeconds: 600, successThreshold: 50 }],
      disruptionBudget: { maxUpdatingPerSite: { count: 1 } },
    });
    expect(dispatched(first.decisions)).toEqual(["n000"]);
    const slow = (extra: Partial<ObservedNode> = {}) =>
      targets.map((n) =>
        n.id === "n000"
          ? observe(n, { instance: { state: "pulling", since: T0, reason: null }, ...extra })
          : observe(n),
      );
    // Timed out (a failure for the verdict), but still pulling: it is still updating.
    const timedOut = decideRollout(first.state, slow(), T0 + 600_000);
    expect(dispatched(timedOut)).toEqual([]);
    expect(waitOf(timedOut, "disruption_budget")?.nodeIds).toEqual(["n001", "n002"]);
    // Gone offline: it no longer updates anything.
    expect(dispatched(decideRollout(first.state, slow({ online: false }), T0 + 600_000))).toEqual(["n001"]);
    // Still pulling after a second timeout: presumed stuck, the site goes on.
    expect(dispatched(decideRollout(first.state, slow(), T0 + 1_200_000))).toEqual(["n001"]);
  });

  it("a percentage budget is of the site's targeted nodes, rounded down but at least 1", () => {
    const first = begin(nodes(7), {
      batches: [{ percent: 100 }],
      disruptionBudget: { maxUpdatingPerSite: { percent: 10 } },
    });
    expect(dispatched(first.decisions)).toEqual(["n000"]);
  });
});

describe("decideRollout: late joiners and completed rollouts", () => {
  const targets = nodes(4);
  const late = node("late");

  it("a node that joined after planning waits for the first batch to pass, then gets the version", () => {
    const first = begin(targets, { batches: [{ count: 2 }] });
    const observedEarly = [...targets.map((n) => observe(n)), observe(late)];
    const early = decideRollout(first.state, observedEarly, T0 + MIN);
    expect(waitOf(early, "late_joiner")?.nodeIds).toEqual(["late"]);
    expect(dispatched(early)).toEqual([]);
    const observed = [
      ...targets.map((n, i) => (i < 2 ? running(n, NEW, T0 + MIN) : observe(n))),
      observe(late),
    ];
    const { decisions, state } = step(first.state, observed, T0 + 2 * MIN);
    expect(dispatched(decisions, "catch_up")).toEqual(["late"]);
    expect(state.dispatches.find((d) => d.nodeId === "late")).toMatchObject({ batch: null, catchUp: true });
  });

  it("a completed rollout still gives the version to nodes that join or return (continuous target)", () => {
    let { state } = begin(targets, { batches: [{ percent: 100 }] });
    state = step(
      state,
      targets.map((n) => running(n, NEW, T0 + MIN)),
      T0 + MIN,
    ).state;
    expect(state.status).toBe("completed");
    const decisions = decideRollout(
      state,
      [...targets.map((n) => running(n, NEW, T0 + MIN)), observe(late)],
      T0 + 5 * MIN,
    );
    expect(decisions).toEqual([
      {
        kind: "dispatch",
        purpose: "catch_up",
        batch: null,
        at: T0 + 5 * MIN,
        nodes: [{ nodeId: "late", fromVersionId: OLD, toVersionId: NEW }],
      },
      expect.objectContaining({ kind: "wait", reason: "updating", nodeIds: ["late"], until: T0 + 35 * MIN }),
    ]);
    expect(
      decideRollout(
        state,
        targets.map((n) => running(n, NEW, T0 + MIN)),
        T0 + 5 * MIN,
      ),
    ).toEqual([]);
  });
});

describe("decideRollout: rollback", () => {
  const targets = [node("a"), node("b", { currentVersionId: null }), node("c"), node("d")];

  function rolledOut() {
    let { state } = begin(targets, { batches: [{ count: 2 }] });
    const observed = targets.map((n, i) => (i < 2 ? running(n, NEW, T0 + MIN) : observe(n)));
    state = step(state, observed, T0 + MIN).state; // batch 1 dispatched
    return state;
  }

  it("sends every touched node back to its previous version (none: the app is removed), batch by batch", () => {
    const state = act(rolledOut(), { type: "rollback", note: "bad release" }, T0 + 2 * MIN);
    expect(state.status).toBe("rolling_back");
    expect(state.rollback?.plan.batches).toEqual([
      {
        index: 0,
        forwardBatch: 0,
        nodes: [
          { nodeId: "a", toVersionId: OLD },
          { nodeId: "b", toVersionId: null },
        ],
      },
      {
        index: 1,
        forwardBatch: 1,
        nodes: [
          { nodeId: "c", toVersionId: OLD },
          { nodeId: "d", toVersionId: OLD },
        ],
      },
    ]);
    const observed = [
      running(targets[0] as TargetNode, NEW, T0 + MIN),
      running(targets[1] as TargetNode, NEW, T0 + MIN),
      observe(targets[2] as TargetNode),
      observe(targets[3] as TargetNode, { online: false }),
    ];
    const first = step(state, observed, T0 + 2 * MIN);
    expect(kinds(first.decisions)).toEqual(["start_batch", "dispatch", "wait:updating"]);
    expect(dispatched(first.decisions, "rollback")).toEqual(["a", "b"]);
    // a is back on OLD, b has no version: batch 0 done; batch 1: c goes, d is offline.
    const back = [
      running(targets[0] as TargetNode, OLD, T0 + 3 * MIN),
      observe(targets[1] as TargetNode, { currentVersionId: null }),
      observe(targets[2] as TargetNode),
      observe(targets[3] as TargetNode, { online: false }),
    ];
    const second = step(first.state, back, T0 + 3 * MIN);
    expect(kinds(second.decisions)).toEqual([
      "finish_batch",
      "start_batch",
      "dispatch",
      "wait:updating",
      "wait:offline_until_return",
    ]);
    expect(dispatched(second.decisions)).toEqual(["c"]);
    const done = step(
      second.state,
      [...back.slice(0, 2), running(targets[2] as TargetNode, OLD, T0 + 4 * MIN), back[3] as ObservedNode],
      T0 + 4 * MIN,
    );
    expect(done.state.status).toBe("rolled_back");
    expect(done.state.statusReason).toContain("3 nodes on their previous version, 0 failed, 1 offline");
    // d returns: rolled back then.
    const returned = decideRollout(
      done.state,
      [...back.slice(0, 3), observe(targets[3] as TargetNode)],
      T0 + 9 * MIN,
    );
    expect(dispatched(returned, "rollback")).toEqual(["d"]);
  });

  it("a rollback ignores maintenance windows but keeps the disruption budget", () => {
    const targets = nodes(4);
    // Open on Mondays 10:00–11:00 UTC only (T0 is Monday 10:00); at most 3 updating.
    let { state } = begin(targets, {
      batches: [{ percent: 100 }],
      disruptionBudget: { maxUpdatingPerSite: { count: 3 } },
      maintenanceWindows: { default: [{ days: ["mon"], start: "10:00", end: "11:00" }] },
    });
    const threeNew = targets.map((n, i) => (i < 3 ? running(n, NEW, T0 + MIN) : observe(n)));
    state = step(state, threeNew, T0 + MIN).state; // the fourth node gets a slot
    expect(state.dispatches).toHaveLength(4);
    const allNew = targets.map((n) => running(n, NEW, T0 + 2 * MIN));
    state = step(state, allNew, T0 + 2 * MIN).state;
    expect(state.status).toBe("completed");
    const afterWindow = T0 + 2 * 60 * MIN;
    const { decisions } = step(act(state, { type: "rollback" }, afterWindow), allNew, afterWindow);
    expect(dispatched(decisions, "rollback")).toEqual(["n000", "n001", "n002"]);
    expect(waitOf(decisions, "disruption_budget")?.nodeIds).toEqual(["n003"]);
    expect(waitOf(decisions, "maintenance_window")).toBeUndefined();
  });

  it("a node that left the target after its dispatch still counts in its batch and is rolled back", () => {
    const targets = nodes(2);
    const first = begin(targets, { batches: [{ count: 2 }] });
    const observed = [
      observe(targets[0] as TargetNode, {
        inTarget: false,
        instance: { state: "failed", since: T0 + MIN, reason: "x" },
      }),
      running(targets[1] as TargetNode, NEW, T0 + MIN),
    ];
    const { decisions, state } = step(first.state, observed, T0 + 2 * MIN);
    expect(decisions[0]).toMatchObject({
      kind: "finish_batch",
      verdict: "failed",
      tally: { failed: 1, succeeded: 1 },
    });
    const rolling = act(state, { type: "rollback" }, T0 + 3 * MIN);
    expect(dispatched(decideRollout(rolling, observed, T0 + 3 * MIN), "rollback")).toEqual(["n000", "n001"]);
  });

  it("an aborted rollout decides nothing: nodes stay as they are", () => {
    const first = begin(nodes(3), { batches: [{ count: 1 }] });
    const aborted = act(first.state, { type: "abort" }, T0 + MIN);
    expect(
      decideRollout(
        aborted,
        nodes(3).map((n) => observe(n)),
        T0 + 2 * MIN,
      ),
    ).toEqual([]);
  });

  it("a rollout that never dispatched rolls back nothing and ends at once", () => {
    const allCurrent = [node("a", { currentVersionId: NEW })];
    const state = begin(allCurrent, { batches: [{ count: 1 }] }).state;
    const rolling = act(state, { type: "rollback" }, T0 + MIN);
    expect(
      step(
        rolling,
        allCurrent.map((n) => observe(n)),
        T0 + MIN,
      ).state.status,
    ).toBe("rolled_back");
  });
});

describe("decideRollout: crash safety and bad state", () => {
  it("deciding twice gives the same decisions; applying them twice changes nothing more", () => {
    const targets = nodes(6, ["s1", "s2"]);
    const first = begin(targets, {
      batches: [{ count: 3 }],
      disruptionBudget: { maxUpdatingPerSite: { count: 1 } },
    });
    const observed = targets.map((n) => observe(n));
    const a = decideRollout(first.state, observed, T0 + MIN);
    expect(decideRollout(first.state, observed, T0 + MIN)).toEqual(a);
    const once = applyDecisions(first.state, first.decisions);
    expect(applyDecisions(once, first.decisions)).toEqual(once);
    // Deciding again after applying never dispatches a node twice.
    expect(dispatched(decideRollout(once, observed, T0))).toEqual([]);
  });

  it("refuses a running rollout without a plan, naming the field", () => {
    const broken: RolloutState = {
      ...newRolloutState(NEW, strategy({ batches: [{ count: 1 }] })),
      status: "running",
    };
    expect(() => decideRollout(broken, [], T0)).toThrow(RolloutInputError);
    expect(() => decideRollout(broken, [], T0)).toThrow("plan");
  });
});

describe("rolloutView", () => {
  it("shows per batch where each node stands, the verdict's counts and the live ones, and late joiners", () => {
    const targets = [node("a"), node("b", { online: false }), node("c"), node("d")];
    const first = begin(
      targets,
      { batches: [{ count: 2 }] },
      targets.map((n) => observe(n)),
    );
    let state = first.state;
    const observed = [
      running(targets[0] as TargetNode, NEW, T0 + MIN),
      ...targets.slice(1).map((n) => observe(n)),
    ];
    state = step(state, observed, T0 + MIN).state;
    const late = observe(node("late"));
    const view = rolloutView(state, [...observed, late], T0 + 2 * MIN);
    expect(view.batches.map((b) => [b.status, b.nodes.map((n) => `${n.nodeId}:${n.outcome}`)])).toEqual([
      ["succeeded", ["a:succeeded", "b:skipped_offline"]],
      ["running", ["c:updating", "d:updating"]],
    ]);
    expect(view.batches[0]?.verdictTally).toMatchObject({ succeeded: 1, skippedOffline: 1 });
    expect(view.lateJoiners.map((n) => `${n.nodeId}:${n.outcome}`)).toEqual(["late:ready"]);
    expect(view.rollback).toBeNull();
    // b comes back and is caught up: the live count changes, the verdict's does not.
    const bOnline = { ...(targets[1] as TargetNode), online: true };
    const back = [...observed.slice(0, 1), running(bOnline, NEW, T0 + 3 * MIN), ...observed.slice(2)];
    state = step(state, [...back.slice(0, 1), observe(bOnline), ...back.slice(2)], T0 + 2 * MIN).state;
    const later = rolloutView(state, back, T0 + 3 * MIN);
    expect(later.batches[0]?.nodes[1]).toMatchObject({ nodeId: "b", outcome: "succeeded", caughtUp: true });
    expect(later.batches[0]?.liveTally).toMatchObject({ succeeded: 2, skippedOffline: 0 });
    expect(later.batches[0]?.verdictTally).toMatchObject({ succeeded: 1, skippedOffline: 1 });
    // Rolled back mid-batch: the running batch shows as stopped, the rollback batches appear.
    const rolling = act(state, { type: "rollback" }, T0 + 4 * MIN);
    const rolled = rolloutView(rolling, back, T0 + 4 * MIN);
    expect(rolled.batches.map((b) => b.status)).toEqual(["succeeded", "stopped"]);
    expect(rolled.rollback?.map((b) => [b.status, b.nodes.map((n) => n.nodeId)])).toEqual([
      ["pending", ["a", "b"]],
      ["pending", ["c", "d"]],
    ]);
  });
});
