/**
 * changedNodeRecords follows what changed (per-list indexes, entries compared by reference); it
 * must answer exactly what comparing both whole states record by record answered (the reference,
 * test/persisted-reference.ts), for any pair of states: realistic steps of simulated rollouts,
 * and random states changed at random, sharing structure or not, in chains, forks and reversed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { changedNodeRecords, type RolloutState } from "../src";
import type { NodeDispatch, RollbackDispatch, RollbackProgress } from "../src/state";
import { referenceChangedNodeRecords } from "./persisted-reference";
import { scenarioArb, simulate } from "./simulation";

function expectSameAsReference(before: RolloutState, after: RolloutState): void {
  expect(changedNodeRecords(before, after)).toStrictEqual(referenceChangedNodeRecords(before, after));
}

const ids = fc.constantFrom(...Array.from({ length: 12 }, (_, i) => `n${i}`));
const version = fc.constantFrom("v1", "v2", "v3");
const at = fc.oneof(
  { weight: 20, arbitrary: fc.integer({ min: 0, max: 5 }) },
  { weight: 1, arbitrary: fc.constant(Number.NaN) },
);

const dispatchArb: fc.Arbitrary<NodeDispatch> = fc.record({
  nodeId: ids,
  batch: fc.option(fc.integer({ min: 0, max: 3 })),
  catchUp: fc.boolean(),
  fromVersionId: fc.option(version),
  toVersionId: version,
  dispatchedAt: at,
});
const rollbackDispatchArb: fc.Arbitrary<RollbackDispatch> = fc.record({
  nodeId: ids,
  toVersionId: fc.option(version),
  dispatchedAt: at,
});
const batchArb = (index: number) =>
  fc.record({
    index: fc.oneof(
      { weight: 10, arbitrary: fc.constant(index) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 5 }) },
    ),
    source: fc.constant({ kind: "remainder" as const }),
    policy: fc.constant({} as never),
    nodeIds: fc.array(ids, { maxLength: 6 }),
    sites: fc.constant<never[]>([]),
  });
const planArb = fc.record({
  targetVersionId: fc.constant("v2"),
  plannedAt: fc.constant(0),
  totals: fc.constant({ target: 0, toUpdate: 0, alreadyCurrent: 0, offline: 0 }),
  alreadyCurrent: fc.array(ids, { maxLength: 4 }),
  batches: fc
    .integer({ min: 0, max: 4 })
    .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => batchArb(i)))),
  sites: fc.constant([]),
  warnings: fc.constant([]),
}) as fc.Arbitrary<NonNullable<RolloutState["plan"]>>;
const rollbackArb: fc.Arbitrary<RollbackProgress> = fc.record({
  startedAt: fc.constant(3),
  reason: fc.constant("rollback"),
  plan: fc.record({
    batches: fc.array(
      fc.record({
        index: fc.integer({ min: 0, max: 3 }),
        forwardBatch: fc.option(fc.integer({ min: 0, max: 3 })),
        nodes: fc.array(
          fc.record({
            nodeId: ids,
            toVersionId: fc.oneof(
              { weight: 20, arbitrary: fc.option(version) },
              { weight: 1, arbitrary: fc.constant(Number.NaN) },
            ) as fc.Arbitrary<string | null>,
          }),
          { maxLength: 5 },
        ),
      }),
      { maxLength: 3 },
    ),
  }),
  batches: fc.constant([]),
  dispatches: fc.array(rollbackDispatchArb, { maxLength: 6 }),
});
const stateArb: fc.Arbitrary<RolloutState> = fc.record({
  status: fc.constantFrom("running", "rolling_back"),
  statusReason: fc.constant(null),
  statusChangedAt: fc.constant(0),
  targetVersionId: fc.constant("v2"),
  strategy: fc.constant({} as RolloutState["strategy"]),
  plan: fc.option(planArb, { freq: 5 }),
  batches: fc.constant([]),
  dispatches: fc.array(dispatchArb, { maxLength: 10 }),
  rollback: fc.option(rollbackArb, { freq: 2 }),
});

/** One change of a state, keeping what it does not touch (as the reducer and the actions do). */
type Change = (state: RolloutState, pick: number) => RolloutState;
const without = <T>(list: readonly T[], i: number) =>
  list.filter((_, j) => j !== i % Math.max(list.length, 1));
const rotated = <T>(list: readonly T[], by: number) => [
  ...list.slice(by % Math.max(list.length, 1)),
  ...list.slice(0, by % Math.max(list.length, 1)),
];
const reversed = <T>(list: readonly T[]) => [...list].reverse();

const changeArb: fc.Arbitrary<Change> = fc.oneof(
  fc.constant<Change>((s) => s),
  fc.constant<Change>((s) => structuredClone(s)),
  fc
    .array(dispatchArb, { minLength: 1, maxLength: 3 })
    .map<Change>((added) => (s) => ({ ...s, dispatches: [...s.dispatches, ...added] })),
  dispatchArb.map<Change>((d) => (s, i) => ({
    ...s,
    dispatches: s.dispatches.map((x, j) => (j === i % s.dispatches.length ? d : x)),
  })),
  fc.constant<Change>((s, i) => ({ ...s, dispatches: without(s.dispatches, i) })),
  fc.constant<Change>((s, i) => ({ ...s, dispatches: s.dispatches.slice(0, i % (s.dispatches.length + 1)) })),
  fc.constant<Change>((s, i) => ({ ...s, dispatches: rotated(s.dispatches, i) })),
  fc.constant<Change>((s, i) =>
    s.plan ? { ...s, plan: { ...s.plan, batches: rotated(s.plan.batches, i) } } : s,
  ),
  fc.constant<Change>((s) => (s.plan ? { ...s, plan: { ...s.plan, batches: reversed(s.plan.batches) } } : s)),
  ids.map<Change>((id) => (s, i) => {
    if (!s.plan) return s;
    const batches = s.plan.batches.map((b, j) =>
      j === i % (s.plan?.batches.length ?? 0) ? { ...b, nodeIds: [...b.nodeIds, id] } : b,
    );
    return { ...s, plan: { ...s.plan, batches } };
  }),
  fc.constant<Change>((s, i) => {
    if (!s.plan) return s;
    const batches = s.plan.batches.map((b, j) =>
      j === i % (s.plan?.batches.length ?? 0) ? { ...b, nodeIds: without(b.nodeIds, i) } : b,
    );
    return { ...s, plan: { ...s.plan, batches } };
  }),
  fc.constant<Change>((s, i) => {
    if (!s.plan) return s;
    const batches = s.plan.batches.map((b, j) =>
      j === i % (s.plan?.batches.length ?? 0) ? { ...b, index: b.index + 1 } : b,
    );
    return { ...s, plan: { ...s.plan, batches } };
  }),
  fc.constant<Change>((s, i) =>
    s.plan ? { ...s, plan: { ...s.plan, batches: without(s.plan.batches, i) } } : s,
  ),
  ids.map<Change>(
    (id) => (s) =>
      s.plan ? { ...s, plan: { ...s.plan, alreadyCurrent: [...s.plan.alreadyCurrent, id] } } : s,
  ),
  fc.constant<Change>((s, i) =>
    s.plan ? { ...s, plan: { ...s.plan, alreadyCurrent: without(s.plan.alreadyCurrent, i) } } : s,
  ),
  planArb.map<Change>((plan) => (s) => ({ ...s, plan })),
  fc.constant<Change>((s) => ({ ...s, plan: null })),
  rollbackArb.map<Change>((rollback) => (s) => ({ ...s, rollback })),
  fc.constant<Change>((s) => ({ ...s, rollback: null })),
  fc
    .array(rollbackDispatchArb, { minLength: 1, maxLength: 3 })
    .map<Change>(
      (added) => (s) =>
        s.rollback
          ? { ...s, rollback: { ...s.rollback, dispatches: [...s.rollback.dispatches, ...added] } }
          : s,
    ),
  fc.constant<Change>((s, i) =>
    s.rollback
      ? {
          ...s,
          rollback: {
            ...s.rollback,
            dispatches: s.rollback.dispatches.slice(0, i % (s.rollback.dispatches.length + 1)),
          },
        }
      : s,
  ),
  fc.constant<Change>((s, i) =>
    s.rollback
      ? { ...s, rollback: { ...s.rollback, plan: { batches: rotated(s.rollback.plan.batches, i) } } }
      : s,
  ),
  fc.constant<Change>((s, i) =>
    s.rollback
      ? {
          ...s,
          rollback: {
            ...s.rollback,
            plan: {
              batches: s.rollback.plan.batches.map((b, j) =>
                j === i % (s.rollback?.plan.batches.length ?? 0) ? { ...b, nodes: reversed(b.nodes) } : b,
              ),
            },
          },
        }
      : s,
  ),
);

describe("changedNodeRecords against the whole-state reference", () => {
  it("answers the same through every step of simulated rollouts", () => {
    fc.assert(
      fc.property(scenarioArb({ maxNodes: 20 }), (scenario) => {
        let previous: RolloutState | null = null;
        simulate(scenario, {
          decided(state) {
            if (previous) {
              expectSameAsReference(previous, state);
              expectSameAsReference(state, previous);
            }
            expectSameAsReference(state, state);
            previous = state;
          },
        });
      }),
      { numRuns: 40 },
    );
  });

  it("answers the same for random states changed at random: chains, forks, reversed, unrelated", () => {
    fc.assert(
      fc.property(
        stateArb,
        fc.array(fc.tuple(fc.nat(), changeArb, fc.nat(), fc.nat()), { minLength: 1, maxLength: 12 }),
        (first, steps) => {
          // Every state made so far; each step changes one of them (the last, mostly: a chain).
          const states = [first];
          for (const [base, change, pick, other] of steps) {
            const before =
              base % 3 === 0
                ? (states[base % states.length] as RolloutState)
                : (states.at(-1) as RolloutState);
            const after = change(before, pick);
            expectSameAsReference(before, after);
            expectSameAsReference(after, before);
            expectSameAsReference(states[other % states.length] as RolloutState, after);
            states.push(after);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
