import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyAction,
  applyDecisions,
  type BatchGateOutcome,
  type BatchGateResult,
  type Decision,
  decideRollout,
  gatesDue,
  type ObservedNode,
  type RolloutState,
  type RolloutStrategyInput,
  recordGateResult,
} from "../src";
import { NEW, nodes, observe, running, started, T0 } from "./fixtures";

const MIN = 60_000;
const WINDOW = 120;

const step_ = (state: RolloutState, observed: ObservedNode[], now: number) => step(state, observed, now);

function step(state: RolloutState, observed: ObservedNode[], now: number) {
  const decisions = decideRollout(state, observed, now);
  return { decisions, state: applyDecisions(state, decisions) };
}
const kinds = (decisions: Decision[]) =>
  decisions.map((d) => (d.kind === "wait" ? `wait:${d.reason}` : d.kind));

const gate = {
  name: "app-cpu",
  metric: { preset: "app_cpu" as const },
  windowSeconds: WINDOW,
  criterion: { kind: "compare" as const },
  critical: true,
};

const targets = nodes(4);

/** Batch 0 (2 nodes, with the gate) is running on NEW from T0 + 1 min, and its install verdict is in. */
function batchRunning(input: Partial<RolloutStrategyInput> = {}) {
  const first = step(
    started(targets, { batches: [{ count: 2, gates: [gate] }], ...input }),
    targets.map((n) => observe(n)),
    T0,
  );
  const observed = targets.map((n, i) => (i < 2 ? running(n, NEW, T0 + MIN) : observe(n)));
  const finished = step(first.state, observed, T0 + MIN);
  return { observed, ...finished };
}

const result = (outcome: BatchGateResult["outcome"]): BatchGateResult => ({
  outcome,
  reason: `judged ${outcome}`,
  windowStart: T0 + MIN,
  windowEnd: T0 + MIN + WINDOW * 1000,
  evaluatedAt: T0 + MIN + WINDOW * 1000,
});

describe("metric gates in the decider", () => {
  it("a batch that passed on install waits for its gates' window, dispatching nothing more, and says until when", () => {
    const { decisions, state, observed } = batchRunning();
    expect(kinds(decisions)).toEqual(["finish_batch", "wait:gates"]);
    const end = T0 + MIN + WINDOW * 1000;
    expect(decisions.find((d) => d.kind === "wait")).toMatchObject({ until: end });
    expect(gatesDue(state, end - 1)).toBeNull();
    expect(gatesDue(state, end)).toMatchObject({ batch: 0, windowStart: T0 + MIN, windowEnd: end });
    // Past the window but not judged yet: still waiting (never a silent pass).
    expect(kinds(decideRollout(state, observed, end + 10 * MIN))).toEqual(["wait:gates"]);
  });

  it("pass: the next batch starts", () => {
    const { state, observed } = batchRunning();
    const judged = recordGateResult(state, 0, result("pass"));
    expect(gatesDue(judged, T0 + 60 * MIN)).toBeNull();
    expect(kinds(decideRollout(judged, observed, T0 + 5 * MIN))).toEqual([
      "start_batch",
      "dispatch",
      "wait:updating",
    ]);
  });

  it("fail: rolls back by default, with the gate's reason", () => {
    const { state, observed } = batchRunning();
    const decisions = decideRollout(recordGateResult(state, 0, result("fail")), observed, T0 + 5 * MIN);
    expect(decisions[0]).toMatchObject({ kind: "start_rollback" });
    expect((decisions[0] as { reason: string }).reason).toContain(
      "batch 0's metric gates: fail: judged fail",
    );
    expect(decisions.some((d) => d.kind === "dispatch" && d.purpose === "rollback")).toBe(true);
  });

  it("fail with onFail pause, and inconclusive by default: halts (failed); a person resuming goes on", () => {
    for (const [input, outcome] of [
      [{ gateActions: { onFail: "pause" } }, "fail"],
      [{}, "inconclusive"],
    ] as const) {
      const { state, observed } = batchRunning(input);
      const halted = step(recordGateResult(state, 0, result(outcome)), observed, T0 + 5 * MIN);
      expect(halted.state.status).toBe("failed");
      expect(halted.state.statusReason).toContain(`metric gates: ${outcome}`);
      const resumed = applyAction(halted.state, { type: "resume" }, T0 + 6 * MIN);
      if (!resumed.ok) throw new Error(resumed.error.message);
      expect(kinds(decideRollout(resumed.state, observed, T0 + 6 * MIN))).toContain("start_batch");
    }
  });

  it("inconclusive with onInconclusive continue or rollback", () => {
    const go = batchRunning({ gateActions: { onInconclusive: "continue" } });
    expect(
      kinds(
        decideRollout(recordGateResult(go.state, 0, result("inconclusive")), go.observed, T0 + 5 * MIN),
      )[0],
    ).toBe("start_batch");
    const back = batchRunning({ gateActions: { onInconclusive: "rollback" } });
    expect(
      decideRollout(recordGateResult(back.state, 0, result("inconclusive")), back.observed, T0 + 5 * MIN)[0]
        ?.kind,
    ).toBe("start_rollback");
  });

  it("records a result once (idempotent), and never judges a batch that failed on install", () => {
    const { state } = batchRunning();
    const once = recordGateResult(state, 0, result("fail"));
    expect(recordGateResult(once, 0, result("pass"))).toBe(once);
    const failedOnInstall = step(
      started(targets, { batches: [{ count: 2, gates: [gate] }] }),
      targets.map((n) => observe(n)),
      T0,
    );
    const observed = targets.map((n, i) =>
      i < 2 ? observe(n, { instance: { state: "failed", since: T0 + MIN, reason: "crash" } }) : observe(n),
    );
    const after = step(failedOnInstall.state, observed, T0 + MIN);
    expect(after.state.batches[0]?.verdict).toBe("failed");
    expect(gatesDue(after.state, T0 + 60 * MIN)).toBeNull();
  });

  it("holds late joiners until the first batch's gates passed", () => {
    const { state, observed } = batchRunning();
    const late = observe({ ...targets[0], id: "late", name: "late" } as ObservedNode);
    const waiting = decideRollout(state, [...observed, late], T0 + 5 * MIN);
    expect(kinds(waiting)).toContain("wait:late_joiner");
    const passed = recordGateResult(state, 0, result("pass"));
    const after = step(passed, [...observed, late], T0 + 5 * MIN);
    expect(after.state.dispatches.map((d) => d.nodeId)).toContain("late");
  });
});

describe("metric gates in the decider, properties", () => {
  const outcomes: BatchGateOutcome[] = ["pass", "fail", "inconclusive"];

  it("no batch starts before the previous one's gates are judged; the end follows the outcomes and gateActions", () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
        fc.array(fc.constantFrom(...outcomes), { minLength: 4, maxLength: 4 }),
        fc.constantFrom("rollback", "pause") as fc.Arbitrary<"rollback" | "pause">,
        fc.constantFrom("pause", "continue", "rollback") as fc.Arbitrary<"pause" | "continue" | "rollback">,
        (gated, results, onFail, onInconclusive) => {
          const fleet = nodes(gated.length * 2);
          let state = started(fleet, {
            batches: gated.map((g) => ({ count: 2, ...(g ? { gates: [gate] } : {}) })),
            gateActions: { onFail, onInconclusive },
          });
          let now = T0;
          let expected: "completed" | "rolled_back" | "failed" = "completed";
          for (let step = 0; step < 40 && state.status === "running"; step++) {
            // Every dispatched node runs the version a minute later.
            const dispatched = new Set(state.dispatches.map((d) => d.nodeId));
            const observed = fleet.map((n) => (dispatched.has(n.id) ? running(n, NEW, now) : observe(n)));
            now += MIN;
            const decided = step_(state, observed, now);
            state = decided.state;
            // Never past a gated batch whose verdict is not recorded.
            state.batches.forEach((_batch, i) => {
              if (i > 0 && gated[i - 1] && state.batches[i - 1]?.verdict === "succeeded")
                expect(state.batches[i - 1]?.gates ?? null).not.toBeNull();
            });
            const due = gatesDue(state, now + WINDOW * 1000);
            if (due) {
              const outcome = results[due.batch] as BatchGateOutcome;
              const action = outcome === "pass" ? "go" : outcome === "fail" ? onFail : onInconclusive;
              if (action === "rollback") expected = "rolled_back";
              else if (action === "pause") expected = "failed";
              now += WINDOW * 1000;
              state = recordGateResult(state, due.batch, { ...result(outcome), evaluatedAt: now });
              if (action === "rollback" || action === "pause") {
                const acted = step_(state, observed, now).state;
                expect(acted.status).toBe(action === "rollback" ? "rolling_back" : "failed");
                expect(acted.batches).toHaveLength(due.batch + 1);
                return;
              }
            }
          }
          expect(state.status).toBe(expected);
        },
      ),
    );
  });

  it("a timed pause after a gated batch runs from the verdict, not from the install", () => {
    const { state, observed } = batchRunning({
      batches: [{ count: 2, gates: [gate], pauseAfter: { seconds: 600 } }],
    });
    const judgedAt = T0 + 30 * MIN;
    const judged = recordGateResult(state, 0, { ...result("pass"), evaluatedAt: judgedAt });
    const waiting = decideRollout(judged, observed, judgedAt + 1000);
    expect(kinds(waiting)).toEqual(["wait:timed_pause"]);
    expect(waiting[0]).toMatchObject({ until: judgedAt + 600_000 });
    expect(kinds(decideRollout(judged, observed, judgedAt + 600_000))[0]).toBe("start_batch");
  });
});
