import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ALREADY_CURRENT_BATCH,
  changedNodeRecords,
  decideRollout,
  isRolloutStateDocument,
  joinRolloutState,
  type RolloutState,
  splitRolloutState,
} from "../src";
import type { NodeDispatch } from "../src/state";
import { scenarioArb, simulate } from "./simulation";

/** What the stored form must keep: every per-node fact, and the decisions made from it. */
function roundTrip(state: RolloutState): RolloutState {
  const { document, nodes } = splitRolloutState(JSON.parse(JSON.stringify(state)));
  expect(isRolloutStateDocument(JSON.parse(JSON.stringify(document)))).toBe(true);
  expect(JSON.stringify(document)).not.toContain('"nodeIds":["');
  return joinRolloutState(JSON.parse(JSON.stringify(document)), [...nodes].reverse());
}

describe("stored rollout state (document + node rows)", () => {
  it("round-trips every state of simulated rollouts, and the decider decides the same on it", () => {
    fc.assert(
      fc.property(scenarioArb({ maxNodes: 20 }), (scenario) => {
        let checked = 0;
        simulate(scenario, {
          decided(state, observed, decisions, now) {
            const back = roundTrip(state);
            expect(back.plan).toEqual(state.plan);
            expect(back.batches).toEqual(state.batches);
            expect(back.dispatches).toEqual(state.dispatches);
            expect(back.rollback?.plan).toEqual(state.rollback?.plan);
            expect(back.rollback?.dispatches).toEqual(state.rollback?.dispatches);
            expect(decideRollout(back, observed, now)).toEqual(decisions);
            checked++;
          },
        });
        expect(checked).toBeGreaterThan(0);
      }),
      { numRuns: 40 },
    );
  });

  it("marks already-current nodes and writes only the rows a step changed", () => {
    const base: RolloutState = {
      status: "running",
      statusReason: null,
      statusChangedAt: 1,
      targetVersionId: "v2",
      strategy: {} as RolloutState["strategy"],
      plan: {
        targetVersionId: "v2",
        plannedAt: 1,
        totals: { target: 3, toUpdate: 2, alreadyCurrent: 1, offline: 0 },
        alreadyCurrent: ["c"],
        batches: [
          {
            index: 0,
            source: { kind: "remainder" },
            policy: {} as never,
            nodeIds: ["b", "a"],
            sites: [],
          },
        ],
        sites: [],
        warnings: [],
      },
      batches: [],
      dispatches: [],
      rollback: null,
    };
    const { nodes } = splitRolloutState(base);
    expect(nodes.find((n) => n.nodeId === "c")?.planBatch).toBe(ALREADY_CURRENT_BATCH);
    expect(joinRolloutState(splitRolloutState(base).document, nodes).plan?.batches[0]?.nodeIds).toEqual([
      "b",
      "a",
    ]);
    const after: RolloutState = {
      ...base,
      dispatches: [
        { nodeId: "a", batch: 0, catchUp: false, fromVersionId: "v1", toVersionId: "v2", dispatchedAt: 5 },
      ],
    };
    expect(changedNodeRecords(base, after).map((n) => n.nodeId)).toEqual(["a"]);
    expect(changedNodeRecords(after, after)).toEqual([]);
    // A deep copy is no change; one field deep inside a dispatch or a rollback is.
    expect(changedNodeRecords(after, structuredClone(after))).toEqual([]);
    const later: RolloutState = {
      ...after,
      dispatches: [{ ...(after.dispatches[0] as NodeDispatch), dispatchedAt: 6 }],
    };
    expect(changedNodeRecords(after, later).map((n) => n.nodeId)).toEqual(["a"]);
    const rolledBack: RolloutState = {
      ...after,
      rollback: {
        ...({} as NonNullable<RolloutState["rollback"]>),
        plan: { batches: [{ index: 0, nodes: [{ nodeId: "b", toVersionId: null }] } as never] },
        dispatches: [],
      },
    };
    expect(changedNodeRecords(after, rolledBack).map((n) => n.nodeId)).toEqual(["b"]);
  });
});
