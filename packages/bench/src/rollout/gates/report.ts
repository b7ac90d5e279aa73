import { mkdir, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import type { TopLevelSpec } from "vega-lite";
import { renderSvg } from "../../charts.js";
import type { MachineInfo } from "../../machine.js";
import type { PhaseUsage } from "../../proc.js";
import { step } from "../../progress.js";
import { REPO_ROOT } from "../../stack.js";
import { APP_MODEL, type Hardware } from "./behaviour.js";
import { ingestAt } from "./ingest.js";
import { type GatesSummary, lagAtVerdicts, type RunRecord, runOutcome } from "./scenario.js";

export const RESULTS = "rollout-gates-results.json";
const REPORT = "rollout-gates.md";

export interface GatesResults {
  command: string;
  profile: string;
  commit: string;
  machine: MachineInfo;
  /** When the scenario started (ISO). */
  at: string;
  /** 1, 5 and 15 minute load averages at the end. */
  loadAverage: number[];
  config: {
    nodes: number;
    hardware: Record<Hardware, number>;
    goodRuns: number;
    windowSeconds: number;
    metricsIntervalSeconds: number;
    canaryPercent: number;
    secondPercent: number;
    hollowProcesses: number;
    settleSeconds: number;
    /** Absent in results written before the catch-up wait existed. */
    catchUpSeconds?: number;
    strategy: unknown;
  };
  fleet: { enrolled: number; online: number; enrollSeconds: number };
  scenarioSeconds: number;
  runs: RunRecord[];
  summary: GatesSummary;
  usage: PhaseUsage[];
  problems: string[];
  notes: string[];
}

const KIND_TITLE: Record<string, string> = {
  good: "good",
  cpu_hog: "CPU hog",
  memory_leak: "memory leak",
  crash_loop: "crash loop",
};
const KINDS = Object.values(KIND_TITLE);
const base = { $schema: "https://vega.github.io/schema/vega-lite/v6.json", width: 640 } as const;

/** Nodes each version reached (dispatched by the controller), one bar per run. */
export function reachedChartSpec(results: GatesResults): TopLevelSpec {
  return {
    ...base,
    height: 240,
    title: `Nodes each version reached, of ${results.fleet.enrolled} (log scale)`,
    data: {
      values: results.runs.map((run) => ({
        run: `${String(run.run).padStart(2, "0")} ${run.label}`,
        nodes: Math.max(1, run.reached.dispatched),
        kind: KIND_TITLE[run.kind] ?? run.kind,
      })),
    },
    layer: [
      {
        mark: "bar",
        encoding: {
          x: { field: "run", type: "ordinal", title: "run, version", axis: { labelAngle: -60 } },
          y: { field: "nodes", type: "quantitative", title: "nodes dispatched", scale: { type: "log" } },
          // A log scale has no zero: bars start at 1 node.
          y2: { datum: 1 },
          color: { field: "kind", type: "nominal", title: null, sort: KINDS, scale: { domain: KINDS } },
        },
      },
      {
        mark: { type: "text", dy: -6 },
        encoding: {
          x: { field: "run", type: "ordinal" },
          y: { field: "nodes", type: "quantitative" },
          text: { field: "nodes", type: "quantitative" },
        },
      },
    ],
  };
}

interface GatePoint {
  run: string;
  kind: string;
  gate: string;
  batch: string;
  pValue: number | null;
  relativeDelta: number | null;
  breaching: number | null;
  canaryNodes: number;
}

export function gatePoints(runs: readonly RunRecord[]): GatePoint[] {
  return runs.flatMap((run) =>
    run.batches.flatMap((batch) =>
      (batch.gates?.gates ?? []).map((gate) => ({
        run: `${String(run.run).padStart(2, "0")} ${run.label}`,
        kind: KIND_TITLE[run.kind] ?? run.kind,
        gate: gate.gate,
        batch: `batch ${batch.batch + 1}`,
        pValue: gate.pValue,
        relativeDelta: gate.relativeDelta,
        breaching: gate.breaching,
        canaryNodes: gate.canary.nodes,
      })),
    ),
  );
}

const P_FLOOR = 1e-12;

/** Each compare gate's p-value per run and batch, against the 1 % the gates need. */
export function pValueChartSpec(results: GatesResults): TopLevelSpec {
  const values = gatePoints(results.runs)
    .filter((p) => p.pValue !== null)
    .map((p) => ({ ...p, p: Math.max(P_FLOOR, p.pValue as number) }));
  return {
    ...base,
    height: 260,
    title: `Mann–Whitney p-value of the compare gates, canary vs baseline (floored at ${P_FLOOR})`,
    layer: [
      {
        data: { values },
        mark: { type: "point", filled: true, size: 60 },
        encoding: {
          x: { field: "run", type: "ordinal", title: "run, version", axis: { labelAngle: -60 } },
          y: { field: "p", type: "quantitative", title: "p (log)", scale: { type: "log" } },
          color: { field: "gate", type: "nominal", title: "gate" },
          shape: { field: "batch", type: "nominal", title: null },
        },
      },
      {
        data: { values: [{ alpha: 0.01 }] },
        mark: { type: "rule", strokeDash: [4, 4], color: "black" },
        encoding: { y: { field: "alpha", type: "quantitative" } },
      },
    ],
  };
}

/** Each compare gate's effect (canary median vs baseline median), against the 20 % tolerance. */
export function effectChartSpec(results: GatesResults): TopLevelSpec {
  const values = gatePoints(results.runs)
    .filter((p) => p.relativeDelta !== null)
    .map((p) => ({ ...p, percent: Math.round((p.relativeDelta as number) * 1000) / 10 }));
  return {
    ...base,
    height: 260,
    title: "Effect: canary median vs baseline median (%); the gates fail above +20 % (and p < 1 %)",
    layer: [
      {
        data: { values },
        mark: { type: "point", filled: true, size: 60 },
        encoding: {
          x: { field: "run", type: "ordinal", title: "run, version", axis: { labelAngle: -60 } },
          y: { field: "percent", type: "quantitative", title: "canary vs baseline, %" },
          color: { field: "gate", type: "nominal", title: "gate" },
          shape: { field: "batch", type: "nominal", title: null },
        },
      },
      {
        data: { values: [{ tolerance: 20 }] },
        mark: { type: "rule", strokeDash: [4, 4], color: "black" },
        encoding: { y: { field: "tolerance", type: "quantitative" } },
      },
    ],
  };
}

/** Canary nodes with a restart in the window (the threshold gate allows none). */
export function restartsChartSpec(results: GatesResults): TopLevelSpec {
  const values = gatePoints(results.runs).filter((p) => p.breaching !== null);
  return {
    ...base,
    height: 200,
    title: "Canary nodes that restarted during the window (app-restarts gate: at most 0)",
    data: { values },
    mark: "bar",
    encoding: {
      x: { field: "run", type: "ordinal", title: "run, version", axis: { labelAngle: -60 } },
      xOffset: { field: "batch", type: "nominal" },
      y: { field: "breaching", type: "quantitative", title: "nodes" },
      color: { field: "batch", type: "nominal", title: null },
    },
  };
}

const CHARTS = {
  "rollout-gates-reached.svg": reachedChartSpec,
  "rollout-gates-pvalues.svg": pValueChartSpec,
  "rollout-gates-effects.svg": effectChartSpec,
  "rollout-gates-restarts.svg": restartsChartSpec,
};

const pct = (value: number | null, digits = 0) =>
  value === null ? "—" : `${value >= 0 ? "+" : ""}${(value * 100).toFixed(digits)} %`;
const pv = (value: number | null) =>
  value === null ? "—" : value < 1e-4 ? value.toExponential(1) : value.toPrecision(2);
const secs = (ms: number) => `${(ms / 1000).toFixed(0)} s`;

function runRow(run: RunRecord): string {
  const outcome = runOutcome(run);
  const batches = run.batches
    .filter((b) => b.gates)
    .map((b) => {
      const gates = b.gates?.gates ?? [];
      const cell = (name: string) => {
        const g = gates.find((x) => x.gate === name);
        if (!g) return "—";
        if (g.breaching !== null) return `${g.outcome} (${g.breaching}/${g.canary.nodes})`;
        return `${g.outcome} (${pct(g.relativeDelta)}, p ${pv(g.pValue)})`;
      };
      const lag =
        run.ingest && b.gates ? ingestAt(run.ingest.samples, b.gates.evaluatedAt)?.lagSeconds : undefined;
      const lagText = lag === undefined || lag === null ? "" : ` · metrics lag ${lag.toFixed(0)} s`;
      return `${b.batch + 1}: ${b.gates?.outcome} · cpu ${cell("app-cpu")} · mem ${cell("app-memory")} · restarts ${cell("app-restarts")}${lagText}`;
    })
    .join("<br>");
  const did = outcome.stopped
    ? `stopped in batch ${outcome.stoppedAtBatch} (${outcome.stoppedBy === "gates" ? outcome.gatesNotPassed.join(", ") : "batch failed"}), ${outcome.action}${run.resetByBenchmark ? " (then rolled back by the benchmark)" : ""}`
    : run.status;
  return `| ${run.run} | \`${run.label}\` | ${KIND_TITLE[run.kind]}${run.kind === "good" ? ` ×${run.behaviour.scale.toFixed(3)}` : ""} | ${did} | ${run.reached.dispatched} / ${run.reached.ran} | ${batches || "—"} | ${secs(run.settledAt - run.startedAt)} | ${run.loadAverage.map((l) => l.toFixed(1)).join(" → ")} |`;
}

/** Failed gates by name; gates that stopped it without failing (no data, inconclusive) marked so. */
function gatesCell(outcome: { gatesNotPassed: string[]; gatesFailed: string[] }): string {
  const other = outcome.gatesNotPassed.filter((g) => !outcome.gatesFailed.includes(g));
  return [
    ...outcome.gatesFailed.map((g) => `${g} failed`),
    ...(other.length > 0 ? [`${other.join(", ")}: no data / inconclusive`] : []),
  ].join("; ");
}

function lagSummary(results: GatesResults): string {
  const lags = lagAtVerdicts(results.runs).filter((l) => l.lagSeconds !== null);
  if (lags.length === 0) return "The lag was not measured in this run (see the notes below).";
  const values = lags.map((l) => l.lagSeconds as number).sort((a, b) => a - b);
  const waited = results.runs.map((run) => run.ingest?.waitedSeconds ?? 0);
  return `Age of the newest per-app sample when each gated batch was judged: median ${(values[Math.floor(values.length / 2)] as number).toFixed(0)} s, max ${(values.at(-1) as number).toFixed(0)} s (${lags.length} verdicts; window ${results.config.windowSeconds} s). Before each run the benchmark waited until it was under ${3 * results.config.metricsIntervalSeconds} s (at most ${results.config.catchUpSeconds ?? "—"} s): ${waited.reduce((a, b) => a + b, 0).toFixed(0)} s in all, at most ${Math.max(0, ...waited).toFixed(0)} s before one run.`;
}

export async function writeGatesReport(results: GatesResults, outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  // The numbers first: a chart that fails to render must not lose an hour's measurements.
  await writeFile(join(outDir, RESULTS), `${JSON.stringify(results, null, 2)}\n`);
  for (const [file, spec] of Object.entries(CHARTS))
    await writeFile(join(outDir, file), await renderSvg(spec(results)));
  const s = results.summary;
  const c = results.config;
  const m = results.machine;
  const bad = s.bad
    .map(
      (b) =>
        `| ${KIND_TITLE[b.kind]} | \`${b.label}\` | ${b.stopped ? "yes" : "**no**"} | ${b.stoppedAtBatch ?? "—"} | ${b.stoppedBy === "gates" ? gatesCell(b) : (b.stoppedBy ?? "—")} | ${b.reached.dispatched} (${b.fleetPercent.toFixed(1)} %) / ${b.reached.ran} | ${b.action} | ${b.verdictSeconds === null ? "—" : `${b.verdictSeconds.toFixed(0)} s`} | ${b.seconds.toFixed(0)} s |`,
    )
    .join("\n");
  const usage = results.usage
    .filter((u) => u.phase === "good runs")
    .map(
      (u) =>
        `| ${u.component} | ${u.cpuPercentMean.toFixed(0)} % | ${u.cpuPercentMax.toFixed(0)} % | ${u.rssMiBMax.toFixed(0)} MiB |`,
    )
    .join("\n");
  const canary = (c.strategy as { batches: Array<{ count?: number }> }).batches[0]?.count ?? "?";
  const markdown = `# Metric gates: bad versions stopped, good versions let through

Measured by \`${results.command.replace(/ --note .*$/s, "")}\` on ${results.at.slice(0, 16).replace("T", " ")} UTC (commit \`${results.commit.slice(0, 10)}\`,
stack profile \`${results.profile}\`) on ${m.cores} cores (${m.cpuModel}, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}),
shared with other sessions' builds and stacks: load average at the end ${results.loadAverage.join(", ")}; each run's
load at its start and end is in its row. **The whole scenario took ${(results.scenarioSeconds / 60).toFixed(1)} min**
(stack, ${results.fleet.enrolled} nodes enrolled in ${results.fleet.enrollSeconds.toFixed(0)} s, ${results.runs.length} rollouts). Raw numbers: [\`${RESULTS}\`](${RESULTS}).

## Result

| target | met |
|---|---|
| every bad version stopped in its first batch | ${s.targets.everyBadStoppedInFirstBatch ? "**yes**" : "**no**"} |
| … by a gate that failed on the bad behaviour (not on missing data) | ${s.targets.everyBadDetectedInFirstBatch ? "**yes**" : "**no**"} |
| no false positive over ${s.good.runs} good runs | ${s.targets.noFalsePositives ? "**yes**" : `**no** (${s.good.falsePositives})`} |

| bad version | label | stopped | in batch | by | nodes reached: dispatched (of fleet) / ran it | the rollout | start → verdict | start → stopped |
|---|---|---|---:|---|---|---|---:|---:|
${bad}

Good versions: **${s.good.falsePositives} false positives in ${s.good.runs} runs** (rate ${s.good.rate === null ? "—" : `${(s.good.rate * 100).toFixed(0)} %`}); ${s.good.completed} completed, ${s.good.batchesJudged} gated batches judged, ${s.good.batchesNotPassed} not passed.
${s.good.stops.map((stop) => `- \`${stop.label}\` stopped in batch ${stop.batch ?? "?"} (${stop.gates.join(", ")}), ${stop.action}`).join("\n")}
A good rollout through all its batches took ${s.good.medianSeconds === null ? "—" : `${s.good.medianSeconds.toFixed(0)} s`} (median).

![nodes reached per version](rollout-gates-reached.svg)

## What ran

- **One stack, one fleet, every run.** The \`${results.profile}\` profile's real Postgres, NATS hub and Mimir, the
  real gateway (its rollout controller judges the gates; agents report metrics every ${c.metricsIntervalSeconds} s, the
  default is 60 s), and ${results.fleet.enrolled} Node hollow agents (${c.hardware.pi4} labelled \`hw=pi4\`, ${c.hardware.nuc} \`hw=nuc\`;
  real protocol, enrollment and credentials, one NATS connection each, in ${c.hollowProcesses} worker process${c.hollowProcesses === 1 ? "" : "es"}) enrolled once.
  All run \`2.0.0\` first (set as desired state); then each run rolls out a new version of the app to all of
  them, in turn, after the previous run stopped moving and ${c.settleSeconds} s more.
- **The runs:** ${c.goodRuns} good versions, each a fresh version rolled out through all its batches, and three bad
  ones after good runs 1, 2 and 3 (so that a good rollout follows every rollback).
- **Per-app metrics, chosen by the version, never by the node.** Before each rollout the driver sends the
  workers a table _version label → behaviour_; the hollow runtime asks it at each metrics sample
  (\`HollowRuntimeOptions.usage\`, which now gets the time since the app last started) and at each
  start (\`crashes\`, new: the app exits, is reported \`failed\`, and is restarted with its restart
  count up, as the process runtime does). Model (\`packages/bench/src/rollout/gates/behaviour.ts\`):
  - good: ${APP_MODEL.cpuPermille / 10} % of a core and ${APP_MODEL.memoryBytes / 1e6} MB on a pi4 (a nuc: ×${APP_MODEL.hardware.nuc.cpu} CPU, ×${APP_MODEL.hardware.nuc.memory} memory); each good release
    drifts by up to ±${APP_MODEL.releaseDrift * 100} % from the model (its ×factor in the table below);
  - each node has its own fixed level (log-normal, σ ${APP_MODEL.nodeSpread.cpu} for CPU, ${APP_MODEL.nodeSpread.memory} for memory, from its name) and
    each sample its noise (σ ${APP_MODEL.sampleNoise.cpu * 100} % CPU, ${APP_MODEL.sampleNoise.memory * 100} % memory);
  - CPU hog: ×${APP_MODEL.cpuHogFactor} CPU; memory leak: +${APP_MODEL.leakBytesPerSecond / 1e6} MB per second since the app started (a
    leak scaled to a ${c.windowSeconds}-s window); crash loop: up ${APP_MODEL.crash.firstAfterMs[0] / 1000}–${APP_MODEL.crash.firstAfterMs[1] / 1000} s, then crashes every ${APP_MODEL.crash.upMs[0] / 1000}–${APP_MODEL.crash.upMs[1] / 1000} s and
    is restarted ${APP_MODEL.crash.downMs[0] / 1000}–${APP_MODEL.crash.downMs[1] / 1000} s later (flapping between \`running\` and \`failed\`).
- **Gates as an operator sets them: the console's presets**, on both gated batches, all critical, window
  **${c.windowSeconds} s** (short for the benchmark; the console proposes 300 s):
  - \`app-cpu\` and \`app-memory\`: canary vs baseline, Mann–Whitney U on per-node averages over the window,
    fail when p < 0.01 *and* the canary's median is more than 20 % above the baseline's;
  - \`app-restarts\`: threshold, no canary node may restart in the window (\`increase(...) ≤ 0\`, failure limit 0).
  The baseline is the product's own choice (same hardware first, twice the canary, 10–500 nodes).
- **Batches:** ${canary} nodes (${c.canaryPercent} %, stratified across hardware by the product), then ${c.secondPercent} %, then the rest
  without gates (no baseline would be left). Every node must make it (threshold 100 %); a failed batch or
  gate rolls back, an inconclusive gate pauses (then the benchmark rolls it back to reset the fleet).
- **Reached**: nodes the controller dispatched the version to / nodes whose runtime was told to run it
  (counted in the workers).

## Every run

Per gated batch: the batch's gate outcome, then per gate its outcome and numbers (compare: canary vs
baseline median, p-value; restarts: canary nodes that restarted / canary nodes).

| run | version | behaviour | what the rollout did | reached: dispatched / ran | gates per batch | start → stopped | load |
|---:|---|---|---|---|---|---:|---|
${results.runs.map(runRow).join("\n")}

![p-values](rollout-gates-pvalues.svg)

![effect sizes](rollout-gates-effects.svg)

![restarts](rollout-gates-restarts.svg)

## How far behind the metrics were

A gate judges the window that ends when it is due, with what Mimir holds then. The gateway takes in
every node's metrics and status reports from a JetStream stream; a rollout's status burst on this
shared machine puts it behind, and samples still queued are not in the verdict (a canary with none
is "no data": inconclusive, the rollout pauses; never a silent pass).
${lagSummary(results)}

## Cost while the good versions rolled out

| component | CPU mean | CPU max | RSS max |
|---|---:|---:|---:|
${usage}

## Reading the numbers

- A bad version is stopped at the first gated batch whose gates judge it: here the canary, ${canary} nodes; it
  reaches no other node, and the rollback puts those back on the version they ran.
- Of the good versions' ${s.good.compares} compare-gate judgements, ${s.good.significant} found a difference significant (p < 1 %) and
  ${s.good.significantWithinTolerance} of those passed because it was within the 20 % tolerance: a big batch (${c.secondPercent} %, against up to 500
  baseline nodes) detects the few percent a good release drifts by, so the tolerance, not the p-value
  alone, is what lets a good version through. The largest effect a good version showed was
  ${Object.entries(s.good.largestEffectByBatch)
    .map(([batch, effect]) => `${pct(effect, 1)} in batch ${batch}`)
    .join(" and ")}: a small canary's median moves with the per-node spread
  (±${APP_MODEL.nodeSpread.cpu * 100} % CPU), which is how close a good version comes to the tolerance.
- The restarts gate is absolute: a good version whose app restarted once on one canary node in the
  window would be stopped. The model's good versions never crash; real fleets have rare crashes, for
  which an operator sets a failure limit.
- The memory leak's rate is scaled to the short window; over a 5-minute window a leak 10× slower
  shows the same growth.
${results.problems.map((p) => `- **Problem:** ${p}`).join("\n")}
${results.notes.map((note) => `- ${note}`).join("\n")}
`;
  await writeFile(join(outDir, REPORT), markdown);
  step(`wrote ${relative(REPO_ROOT, join(outDir, REPORT))}`);
}
