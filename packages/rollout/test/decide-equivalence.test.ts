/**
 * decideRollout and applyDecisions keep indexes per state (plan, dispatch lists: built once,
 * shared by the states a step makes from one another) instead of rebuilding every map on every
 * call. They must decide and apply exactly what they did before (the frozen reference,
 * test/decide-reference.ts), deep-equal, at every step of simulated rollouts (pauses, approvals,
 * offline nodes, failures and hangs, automatic and manual rollbacks, maintenance windows, late
 * joiners), and for what a step does not usually see: a state just loaded (no index yet), a step
 * retried on the same state, decisions applied twice or in another order, the fleet changed in
 * ways the simulator does not (nodes gone, out of the target, of a new site, listed in another
 * order), the clock moved, and dispatch lists naming a node twice.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyDecisions, type Decision, decideRollout, type ObservedNode, type RolloutState } from "../src";
import { referenceApplyDecisions, referenceDecideRollout } from "./decide-reference";
import { NEW, OLD } from "./fixtures";
import { scenarioArb, simulate } from "./simulation";

const MIN = 60_000;

/** A small deterministic PRNG (mulberry32): the perturbations of one run follow its seed. */
function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** The fleet changed in ways the simulator does not: a few nodes changed, gone, added, reordered. */
function perturbed(observed: ObservedNode[], now: number, pick: (n: number) => number): ObservedNode[] {
  const nodes = [...observed];
  const changes = 1 + pick(4);
  for (let c = 0; c < changes && nodes.length > 0; c++) {
    const i = pick(nodes.length);
    const node = nodes[i] as ObservedNode;
    switch (pick(8)) {
      case 0:
        nodes.splice(i, 1); // gone from the inventory
        break;
      case 1:
        nodes[i] = { ...node, inTarget: false };
        break;
      case 2:
        nodes[i] = { ...node, online: !node.online };
        break;
      case 3:
        nodes[i] = { ...node, currentVersionId: [NEW, OLD, null][pick(3)] ?? null };
        break;
      case 4: {
        const state = (["failed", "pulling", "running", "starting"] as const)[pick(4)] ?? "failed";
        nodes[i] = { ...node, instance: { state, since: now - pick(40) * MIN, reason: null } };
        break;
      }
      case 5: {
        // A node nobody planned for, of a site the plan may not know (its budget is computed now).
        const siteId = pick(2) === 0 ? "site-new" : node.siteId;
        nodes.push({
          ...node,
          id: `joined-${c}-${pick(1000)}`,
          siteId,
          siteTimeZone: siteId === "site-new" ? "UTC" : node.siteTimeZone,
          online: pick(4) !== 0,
          currentVersionId: OLD,
          inTarget: true,
          instance: null,
        });
        break;
      }
      default: {
        // Another order of the same nodes.
        const j = pick(nodes.length);
        nodes[i] = nodes[j] as ObservedNode;
        nodes[j] = node;
      }
    }
  }
  return nodes;
}

/** A dispatch list naming a node twice (no reducer writes one; a hand-edited state could). */
function withRepeatedDispatch(state: RolloutState, pick: (n: number) => number, now: number): RolloutState {
  if (state.dispatches.length === 0) return state;
  const again = state.dispatches[pick(state.dispatches.length)] as RolloutState["dispatches"][number];
  return {
    ...state,
    dispatches: [
      ...state.dispatches,
      { ...again, dispatchedAt: now - pick(30) * MIN, catchUp: !again.catchUp },
    ],
  };
}

function expectSameDecisions(state: RolloutState, observed: ObservedNode[], now: number): Decision[] {
  const expected = referenceDecideRollout(state, observed, now);
  expect(decideRollout(state, observed, now)).toStrictEqual(expected);
  return expected;
}

function expectSameApply(state: RolloutState, decisions: readonly Decision[]): RolloutState {
  const expected = referenceApplyDecisions(state, decisions);
  expect(applyDecisions(state, decisions)).toStrictEqual(expected);
  return expected;
}

function checkEveryStep(seed: number) {
  const pick = prng(seed);
  return {
    decided(state: RolloutState, observed: ObservedNode[], decisions: Decision[], now: number): void {
      // The step as the controller takes it (state kept from its previous step, indexes shared).
      expect(decisions).toStrictEqual(referenceDecideRollout(state, observed, now));
      // The same state just loaded from the database: nothing indexed yet.
      expectSameDecisions(structuredClone(state), observed, now);
      // The same (indexed) state against other fleets and clocks.
      expectSameDecisions(state, perturbed(observed, now, pick), now);
      expectSameDecisions(state, observed, now + pick(90) * MIN);
      const repeated = withRepeatedDispatch(state, pick, now);
      const decidedOnRepeated = expectSameDecisions(repeated, perturbed(observed, now, pick), now);
      expectSameApply(repeated, decidedOnRepeated);
    },
    applied(before: RolloutState, decisions: Decision[], after: RolloutState): void {
      expect(after).toStrictEqual(referenceApplyDecisions(before, decisions));
      // Applied again (idempotent), retried on the same state, on a loaded copy, in another order.
      expectSameApply(after, decisions);
      expectSameApply(before, decisions);
      expectSameApply(structuredClone(before), decisions);
      expectSameApply(before, [...decisions].reverse());
    },
  };
}

describe("decideRollout and applyDecisions against the frozen reference", () => {
  it("decide and apply the same at every step of simulated rollouts", () => {
    fc.assert(
      fc.property(scenarioArb({ maxNodes: 30 }), fc.nat(), (scenario, seed) => {
        simulate(scenario, checkEveryStep(seed));
      }),
      { numRuns: 40 },
    );
  });

  it("decide and apply the same without maintenance windows (more batches, more rollbacks)", () => {
    fc.assert(
      fc.property(scenarioArb({ maxNodes: 40, windows: false }), fc.nat(), (scenario, seed) => {
        simulate(scenario, checkEveryStep(seed));
      }),
      { numRuns: 40 },
    );
  });
});
