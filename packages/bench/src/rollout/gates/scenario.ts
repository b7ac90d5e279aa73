/**
 * The gates scenario's plan and its judgement, pure: which versions are rolled out in which
 * order, the strategy they get (the console's gate presets, as an operator sets them), how one
 * rollout's outcome is read from what the product recorded, and the summary the report quotes.
 */
import type { RolloutStrategyInput } from "@edgefleet/rollout";
import type { Behaviour, BehaviourKind } from "./behaviour.js";
import { type IngestSample, ingestAt } from "./ingest.js";

export const BAD_KINDS = ["cpu_hog", "memory_leak", "crash_loop"] as const satisfies readonly BehaviourKind[];

export interface PlannedRun {
  /** 1-based place in the scenario. */
  run: number;
  /** The version label (what Mimir's `version` label and the behaviour table say). */
  label: string;
  kind: BehaviourKind;
}

/**
 * Good runs with the bad versions among the first ones (after good runs 1, 2 and 3), so that a
 * good rollout also follows each rollback: one fleet serves every run in turn. Good versions are
 * `2.N.0`; a bad one after good N is `2.N.1-<kind>`.
 */
export function planRuns(goodRuns: number): PlannedRun[] {
  const runs: Array<Omit<PlannedRun, "run">> = [];
  let good = 0;
  const addGood = () => {
    good++;
    runs.push({ label: `2.${good}.0`, kind: "good" });
  };
  for (const bad of BAD_KINDS) {
    if (good < goodRuns) addGood();
    runs.push({ label: `2.${good}.1-${bad.replace("_", "-")}`, kind: bad });
  }
  while (good < goodRuns) addGood();
  return runs.map((run, i) => ({ run: i + 1, ...run }));
}

/** The first batch: 1 % of the fleet, at least 5 nodes (the compare gates need 3 per cohort). */
export function canaryCount(nodes: number, percent: number): number {
  return Math.max(5, Math.round((nodes * percent) / 100));
}

/** 1 − the presets' confidence (0.99): a p-value below it is a significant difference. */
export const SIGNIFICANCE = 0.01;

export interface GateSettings {
  windowSeconds: number;
}

/**
 * The console's presets (apps/web rollout-form.ts `presetGate`): app CPU and app memory compared
 * with the baseline (Mann–Whitney U at 99 % confidence and more than 20 % worse than the
 * baseline's median), app restarts by an absolute count (none in the window); all critical.
 */
export function presetGates({ windowSeconds }: GateSettings) {
  const compare = { kind: "compare" as const, worse: "higher" as const, tolerance: 0.2 };
  return [
    {
      name: "app-cpu",
      metric: { preset: "app_cpu" as const },
      windowSeconds,
      criterion: compare,
      critical: true,
    },
    {
      name: "app-memory",
      metric: { preset: "app_memory" as const },
      windowSeconds,
      criterion: compare,
      critical: true,
    },
    {
      name: "app-restarts",
      metric: { preset: "app_restarts" as const },
      windowSeconds,
      criterion: { kind: "threshold" as const, max: 0, failureLimit: 0 },
      critical: true,
    },
  ];
}

/**
 * A canary batch, a bigger gated batch, then the rest without gates (no baseline is left to
 * compare the last batch with). Every node must make it; a failed batch or gate rolls back, an
 * inconclusive gate pauses for a person (the product's defaults).
 */
export function gatesStrategy(input: {
  nodes: number;
  canaryPercent: number;
  secondPercent: number;
  windowSeconds: number;
}): RolloutStrategyInput {
  const gates = presetGates(input);
  return {
    batches: [
      { count: canaryCount(input.nodes, input.canaryPercent), gates },
      { percent: input.secondPercent, gates },
    ],
    defaults: { successThreshold: 100, timeoutSeconds: 600, offline: "skip" },
    onBatchFailure: "rollback",
    gateActions: { onFail: "rollback", onInconclusive: "pause" },
  };
}

/** One gate's numbers, as the product recorded them (rollout_gate_verdict.gates). */
export interface GateNumbers {
  gate: string;
  outcome: string;
  reason: string;
  canary: { nodes: number; median: number | null };
  baseline: { nodes: number; median: number | null };
  pValue: number | null;
  relativeDelta: number | null;
  /** Threshold gates: canary nodes outside the bounds. */
  breaching: number | null;
}

export interface BatchRecord {
  /** 0-based. */
  batch: number;
  dispatched: number;
  firstDispatchAt: number | null;
  lastDispatchAt: number | null;
  /** The product's verdict on the batch's gates (null: not judged). */
  gates: {
    outcome: string;
    windowStart: number;
    windowEnd: number;
    evaluatedAt: number;
    gates: GateNumbers[];
  } | null;
}

export type RunStatus = "completed" | "rolled_back" | "failed" | "cancelled" | "timed_out";

export interface RunRecord extends PlannedRun {
  behaviour: Behaviour;
  /** The rollout's status when it stopped moving by itself (before any reset by the benchmark). */
  status: RunStatus;
  statusReason: string | null;
  batches: BatchRecord[];
  /** Nodes the controller dispatched the version to, and nodes whose runtime was told to run it. */
  reached: { dispatched: number; ran: number };
  /** The benchmark rolled a paused rollout back itself (to reset the fleet for the next run). */
  resetByBenchmark: boolean;
  /**
   * How far behind the gateway's metrics were (ingest.ts): the wait for them to catch up before the
   * run, and samples during it (absent in results of runs before it was measured).
   */
  ingest?: { waitedSeconds: number; samples: IngestSample[] };
  startedAt: number;
  /** When it stopped moving by itself (completed, rolled back, paused). */
  settledAt: number;
  loadAverage: [number, number];
}

export type StoppedBy = "gates" | "batch_failure" | null;

export interface RunOutcome {
  /** Stopped before the last batch by the product (a failed or inconclusive gate, a failed batch). */
  stopped: boolean;
  /** 1-based batch where it was stopped. */
  stoppedAtBatch: number | null;
  stoppedBy: StoppedBy;
  /** Gates whose outcome was not pass in that batch. */
  gatesNotPassed: string[];
  /**
   * Gates that failed on the data (the bad behaviour seen), as opposed to stopping on no data or
   * an inconclusive comparison: a version stopped only for lack of data was stopped, not detected.
   */
  gatesFailed: string[];
  action: "rolled back" | "paused" | "none";
}

/** What the product did with one rollout, from its status and recorded gate verdicts. */
export function runOutcome(run: Pick<RunRecord, "status" | "batches">): RunOutcome {
  const judged = run.batches.find((b) => b.gates !== null && b.gates.outcome !== "pass");
  const action = run.status === "rolled_back" ? "rolled back" : run.status === "failed" ? "paused" : "none";
  if (judged?.gates) {
    return {
      stopped: true,
      stoppedAtBatch: judged.batch + 1,
      stoppedBy: "gates",
      gatesNotPassed: judged.gates.gates.filter((g) => g.outcome !== "pass").map((g) => g.gate),
      gatesFailed: judged.gates.gates.filter((g) => g.outcome === "fail").map((g) => g.gate),
      action,
    };
  }
  if (run.status === "rolled_back" || run.status === "failed") {
    const last = run.batches.filter((b) => b.dispatched > 0).at(-1);
    return {
      stopped: true,
      stoppedAtBatch: last ? last.batch + 1 : null,
      stoppedBy: "batch_failure",
      gatesNotPassed: [],
      gatesFailed: [],
      action,
    };
  }
  return {
    stopped: false,
    stoppedAtBatch: null,
    stoppedBy: null,
    gatesNotPassed: [],
    gatesFailed: [],
    action,
  };
}

export interface GatesSummary {
  bad: Array<
    RunOutcome & {
      label: string;
      kind: BehaviourKind;
      reached: RunRecord["reached"];
      fleetPercent: number;
      /** From the start to the verdict that stopped it (null: not stopped by a gate). */
      verdictSeconds: number | null;
      /** From the start until it stopped moving (rolled back, paused). */
      seconds: number;
    }
  >;
  good: {
    runs: number;
    completed: number;
    falsePositives: number;
    /** falsePositives ÷ runs (null without runs). */
    rate: number | null;
    /** Gated batches judged over all good runs, and how many did not pass. */
    batchesJudged: number;
    batchesNotPassed: number;
    stops: Array<{ label: string; batch: number | null; gates: string[]; action: string }>;
    /** Seconds from start to completion, median over the completed good runs. */
    medianSeconds: number | null;
    /**
     * Compare-gate judgements of good versions: how many, how many had p below 1 % (a real but
     * small difference, let through by the tolerance), and the largest canary-vs-baseline effect
     * seen per batch (1-based).
     */
    compares: number;
    significant: number;
    significantWithinTolerance: number;
    largestEffectByBatch: Record<string, number>;
  };
  targets: {
    everyBadStoppedInFirstBatch: boolean;
    /** Stricter: each stopped in its first batch by a gate that failed on its data. */
    everyBadDetectedInFirstBatch: boolean;
    noFalsePositives: boolean;
  };
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function verdictSeconds(run: RunRecord): number | null {
  const stopping = run.batches.find((b) => b.gates !== null && b.gates.outcome !== "pass");
  return stopping?.gates ? (stopping.gates.evaluatedAt - run.startedAt) / 1000 : null;
}

export function summarizeRuns(runs: readonly RunRecord[], fleetNodes: number): GatesSummary {
  const bad = runs
    .filter((run) => run.kind !== "good")
    .map((run) => ({
      label: run.label,
      kind: run.kind,
      ...runOutcome(run),
      reached: run.reached,
      fleetPercent: fleetNodes > 0 ? (100 * run.reached.dispatched) / fleetNodes : 0,
      verdictSeconds: verdictSeconds(run),
      seconds: (run.settledAt - run.startedAt) / 1000,
    }));
  const goodRuns = runs.filter((run) => run.kind === "good");
  const stops = goodRuns.flatMap((run) => {
    const outcome = runOutcome(run);
    // A good version that did not complete was stopped: a false positive (or a timeout, also one).
    if (!outcome.stopped && run.status === "completed") return [];
    return [
      {
        label: run.label,
        batch: outcome.stoppedAtBatch,
        gates: outcome.stoppedBy === "gates" ? outcome.gatesNotPassed : [outcome.stoppedBy ?? run.status],
        action: outcome.action,
      },
    ];
  });
  const judged = goodRuns.flatMap((run) => run.batches.filter((b) => b.gates !== null));
  const compares = judged.flatMap((b) =>
    (b.gates?.gates ?? []).filter((g) => g.pValue !== null).map((g) => ({ batch: b.batch + 1, gate: g })),
  );
  const significant = compares.filter(({ gate }) => (gate.pValue as number) < SIGNIFICANCE);
  const largestEffectByBatch: Record<string, number> = {};
  for (const { batch, gate } of compares) {
    if (gate.relativeDelta === null) continue;
    largestEffectByBatch[batch] = Math.max(largestEffectByBatch[batch] ?? -Infinity, gate.relativeDelta);
  }
  const completed = goodRuns.filter((run) => run.status === "completed");
  return {
    bad,
    good: {
      runs: goodRuns.length,
      completed: completed.length,
      falsePositives: stops.length,
      rate: goodRuns.length > 0 ? stops.length / goodRuns.length : null,
      batchesJudged: judged.length,
      batchesNotPassed: judged.filter((b) => b.gates?.outcome !== "pass").length,
      stops,
      medianSeconds: median(completed.map((run) => (run.settledAt - run.startedAt) / 1000)),
      compares: compares.length,
      significant: significant.length,
      significantWithinTolerance: significant.filter(({ gate }) => gate.outcome === "pass").length,
      largestEffectByBatch,
    },
    targets: {
      everyBadStoppedInFirstBatch:
        bad.length === BAD_KINDS.length && bad.every((run) => run.stopped && run.stoppedAtBatch === 1),
      everyBadDetectedInFirstBatch:
        bad.length === BAD_KINDS.length &&
        bad.every((run) => run.stoppedAtBatch === 1 && run.gatesFailed.length > 0),
      noFalsePositives: goodRuns.length > 0 && stops.length === 0,
    },
  };
}

/** The metrics lag (seconds) when each gated batch was judged, per run and batch (1-based). */
export function lagAtVerdicts(
  runs: readonly RunRecord[],
): Array<{ run: number; label: string; batch: number; lagSeconds: number | null; backlog: number | null }> {
  return runs.flatMap((run) =>
    run.batches.flatMap((batch) => {
      if (!batch.gates || !run.ingest) return [];
      const sample = ingestAt(run.ingest.samples, batch.gates.evaluatedAt);
      return [
        {
          run: run.run,
          label: run.label,
          batch: batch.batch + 1,
          lagSeconds: sample?.lagSeconds ?? null,
          backlog: sample?.backlog ?? null,
        },
      ];
    }),
  );
}
