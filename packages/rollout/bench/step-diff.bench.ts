/**
 * Micro-benchmark of the pure part of one controller step at 100,000 nodes: decide, apply the
 * decisions, find the node records to write (`changedNodeRecords`) and build the document. The
 * rollout is half-way (realistic planner batches, ~50,000 nodes dispatched, the disruption budget
 * letting ~1 % of the fleet update at a time), and the measured step dispatches ~1 % of the nodes.
 *
 *   pnpm --filter @edgefleet/rollout bench:step-diff      (or: cd packages/rollout && npx tsx bench/step-diff.bench.ts)
 *
 * Prints medians (and minimums) over REPS repetitions, and the machine. "cached before" is the
 * controller's usual step: `before` is the state its previous step committed (RolloutStateCache),
 * already diffed once; "loaded before" is a step after a cache miss (state just read from Postgres).
 * `reference` is the diff as it was (test/persisted-reference.ts): both states split whole; for
 * decideRollout and applyDecisions it is the planner as it was (test/decide-reference.ts): every
 * map of the plan, the dispatches and the fleet rebuilt per call. For them, "cached before" has
 * its plan and dispatch list indexed by the previous step (decided on, applied to), as in the
 * controller; "loaded before" has nothing indexed. Timings of one part only: TIME=decide (or
 * apply, diff, document), comma-separated.
 */
import os from "node:os";
import { performance } from "node:perf_hooks";
import {
  applyAction,
  applyDecisions,
  changedNodeRecords,
  type Decision,
  decideRollout,
  newRolloutState,
  type ObservedNode,
  type RolloutState,
  rolloutStateDocument,
  rolloutStrategySchema,
  splitRolloutState,
  type TargetNode,
} from "../src";
import { referenceApplyDecisions, referenceDecideRollout } from "../test/decide-reference";
import { referenceChangedNodeRecords } from "../test/persisted-reference";

const NODES = Number(process.env.NODES ?? 100_000);
const SITES = 50;
const REPS = Number(process.env.REPS ?? 11);
const PARTS = new Set((process.env.TIME ?? "decide,apply,diff,document").split(","));
const OLD = "7a0e3c52-0000-4000-8000-000000000001";
const NEW = "7a0e3c52-0000-4000-8000-000000000002";
const T0 = Date.UTC(2025, 5, 2, 10, 0);
const MIN = 60_000;

function uuid(i: number, kind: number): string {
  const hash = (Math.imul(i + 1, 2_654_435_761) >>> 0).toString(16).padStart(8, "0");
  return `${hash}-${kind.toString(16).padStart(4, "0")}-4000-8000-${i.toString(16).padStart(12, "0")}`;
}

const sites = Array.from({ length: SITES }, (_, s) => uuid(s, 1));
const targets: TargetNode[] = Array.from({ length: NODES }, (_, i) => ({
  id: uuid(i, 2),
  name: `node-${i}`,
  siteId: sites[i % SITES] ?? null,
  siteTimeZone: "UTC",
  labels: { hw: `gen${i % 3}`, env: "prod" },
  online: i % 97 !== 0,
  // ~2 % already on the version: the plan's "already current" list.
  currentVersionId: i % 50 === 0 ? NEW : OLD,
}));

const strategyWithBudget = (perSite: number) =>
  rolloutStrategySchema.parse({
    batches: [{ count: 500 }, { percent: 10 }, { percent: 40 }],
    defaults: { successThreshold: 90, timeoutSeconds: 1800, offline: "skip" },
    disruptionBudget: { maxUpdatingPerSite: { count: perSite } },
  });
// 20 updating nodes per site, 50 sites: a step dispatches at most 1,000 nodes (1 %). The setup gets
// to half-way with a larger budget (a few steps instead of fifty), then sets this one.
const BUDGET = 20;
const strategy = strategyWithBudget(250);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function time(label: string, run: () => unknown, prepare: () => void = () => {}): number {
  const samples: number[] = [];
  for (let rep = 0; rep < REPS; rep++) {
    prepare();
    const start = performance.now();
    run();
    samples.push(performance.now() - start);
  }
  const med = median(samples);
  console.log(
    `  ${label.padEnd(48)} median ${med.toFixed(2).padStart(9)} ms   min ${Math.min(...samples)
      .toFixed(2)
      .padStart(9)} ms`,
  );
  return med;
}

// --- a rollout half-way through -----------------------------------------------------------------
const setupStart = performance.now();
const startedResult = applyAction(newRolloutState(NEW, strategy), { type: "start", nodes: targets }, T0);
if (!startedResult.ok) throw new Error(startedResult.error.message);
let state: RolloutState = startedResult.state;
const observed: ObservedNode[] = targets.map((t) => ({ ...t, inTarget: true, instance: null }));
const slot = new Map(targets.map((t, i) => [t.id, i]));
let now = T0;
let previous: { state: RolloutState; decisions: Decision[]; now: number } | null = null;
let budgeted = false;

function dispatchedIn(decisions: readonly Decision[]): number {
  return decisions.reduce((n, d) => n + (d.kind === "dispatch" ? d.nodes.length : 0), 0);
}

while (!previous || !budgeted) {
  if (!budgeted && state.dispatches.length >= NODES / 2) {
    budgeted = true;
    const plan = state.plan as NonNullable<RolloutState["plan"]>;
    state = {
      ...state,
      strategy: strategyWithBudget(BUDGET),
      plan: {
        ...plan,
        sites: plan.sites.map((s) => ({ ...s, maxUpdating: Math.min(s.maxUpdating ?? BUDGET, BUDGET) })),
      },
    };
  }
  now += MIN;
  const decisions = decideRollout(state, observed, now);
  const after = applyDecisions(state, decisions);
  for (const d of decisions) {
    if (d.kind !== "dispatch") continue;
    for (const n of d.nodes) {
      const i = slot.get(n.nodeId) as number;
      observed[i] = {
        ...(observed[i] as ObservedNode),
        currentVersionId: n.toVersionId,
        instance: { state: "running", since: now, reason: null },
      };
    }
  }
  if (after === state) throw new Error(`the rollout stopped at ${state.status}: ${state.statusReason}`);
  if (budgeted) previous = { state, decisions, now };
  state = after;
}
if (!previous) throw new Error("no step was taken");
now += MIN;
const before = state;
const decisions = decideRollout(before, observed, now);
const changedNodes = dispatchedIn(decisions);
const setupMs = performance.now() - setupStart;

const cpus = os.cpus();
console.log(
  `step-diff: ${NODES.toLocaleString("en")} nodes on ${SITES} sites, ${state.plan?.batches.length} batches, ` +
    `${before.dispatches.length.toLocaleString("en")} dispatched; the step dispatches ${changedNodes} (${((100 * changedNodes) / NODES).toFixed(1)} %)`,
);
console.log(
  `machine: ${cpus[0]?.model ?? "unknown CPU"} × ${cpus.length}, ${os.platform()} ${os.arch()}, node ${process.version}; setup ${(setupMs / 1000).toFixed(1)} s, ${REPS} repetitions`,
);

// --- the same answer --------------------------------------------------------------------------
{
  const loaded = structuredClone(before);
  const expectedDecisions = JSON.stringify(referenceDecideRollout(loaded, observed, now));
  if (JSON.stringify(decideRollout(loaded, observed, now)) !== expectedDecisions)
    throw new Error("decideRollout (loaded before) differs from the reference");
  if (JSON.stringify(decisions) !== expectedDecisions)
    throw new Error("decideRollout (cached before) differs from the reference");
  const expectedAfter = JSON.stringify(referenceApplyDecisions(loaded, decisions));
  if (JSON.stringify(applyDecisions(before, decisions)) !== expectedAfter)
    throw new Error("applyDecisions differs from the reference");
  const after = applyDecisions(before, decisions);
  const expected = referenceChangedNodeRecords(before, after);
  const actual = changedNodeRecords(before, after);
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    throw new Error("changedNodeRecords differs from the reference");
  console.log(`  changed records: ${actual.length}`);
}

// --- timings ----------------------------------------------------------------------------------
const prev = previous;
let from: RolloutState = before;
let to: RolloutState = before;
/**
 * A `before` as the controller holds it: committed by its previous step, which decided on its
 * predecessor, applied the decisions and diffed.
 */
function cachedBefore(): void {
  const base = structuredClone(prev.state);
  decideRollout(base, observed, prev.now);
  from = applyDecisions(base, prev.decisions);
  changedNodeRecords(base, from);
}
/** A `before` just read from Postgres (a cache miss): nothing about it known yet. */
function loadedBefore(): void {
  from = structuredClone(before);
}
/** The same, and the step's `after` (for the diff and the document). */
const withAfter = (prepare: () => void) => () => {
  prepare();
  to = applyDecisions(from, decisions);
};

const skipped = (label: string) => {
  console.log(`  ${label.padEnd(48)} (not timed: TIME)`);
  return Number.NaN;
};
const part = (name: string, label: string, run: () => unknown, prepare?: () => void) =>
  PARTS.has(name) ? time(label, run, prepare) : skipped(label);

console.log("pure part of one step:");
const decideReference = part(
  "decide",
  "decideRollout, reference",
  () => referenceDecideRollout(from, observed, now),
  loadedBefore,
);
const decide = part(
  "decide",
  "decideRollout, cached before",
  () => decideRollout(from, observed, now),
  cachedBefore,
);
const decideLoaded = part(
  "decide",
  "decideRollout, loaded before",
  () => decideRollout(from, observed, now),
  loadedBefore,
);
const applyReference = part(
  "apply",
  "applyDecisions, reference",
  () => referenceApplyDecisions(from, decisions),
  loadedBefore,
);
const apply = part(
  "apply",
  "applyDecisions, cached before",
  () => applyDecisions(from, decisions),
  cachedBefore,
);
const applyLoaded = part(
  "apply",
  "applyDecisions, loaded before",
  () => applyDecisions(from, decisions),
  loadedBefore,
);
const reference = part(
  "diff",
  "changedNodeRecords, reference (both split)",
  () => referenceChangedNodeRecords(from, to),
  withAfter(loadedBefore),
);
const cached = part(
  "diff",
  "changedNodeRecords, cached before",
  () => changedNodeRecords(from, to),
  withAfter(cachedBefore),
);
const loaded = part(
  "diff",
  "changedNodeRecords, loaded before",
  () => changedNodeRecords(from, to),
  withAfter(loadedBefore),
);
const splitDocument = part(
  "document",
  "document, reference: splitRolloutState + JSON",
  () => JSON.stringify(splitRolloutState(to).document),
  withAfter(loadedBefore),
);
const document = part(
  "document",
  "document: rolloutStateDocument + JSON",
  () => JSON.stringify(rolloutStateDocument(to)),
  withAfter(loadedBefore),
);
// Sums of parts not timed (TIME) are NaN: not printed.
const print = (line: string) => {
  if (!line.includes("NaN")) console.log(line);
};
print(
  `decide + apply: reference ${(decideReference + applyReference).toFixed(1)} ms; ` +
    `now ${(decide + apply).toFixed(1)} ms (cached before), ${(decideLoaded + applyLoaded).toFixed(1)} ms (loaded before)`,
);
print(
  `one step (decide + apply + diff + document): reference ${(decideReference + applyReference + reference + splitDocument).toFixed(1)} ms; ` +
    `now ${(decide + apply + cached + document).toFixed(1)} ms (cached before), ${(decideLoaded + applyLoaded + loaded + document).toFixed(1)} ms (loaded before)`,
);
print(
  `diff + document: reference ${(reference + splitDocument).toFixed(1)} ms; now ${(cached + document).toFixed(2)} ms (cached before), ${(loaded + document).toFixed(1)} ms (loaded before)`,
);
