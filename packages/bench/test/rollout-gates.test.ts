import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rolloutStrategySchema } from "@edgefleet/rollout";
import { describe, expect, it } from "vitest";
import { consumerBacklogOf } from "../src/nats-monitor.js";
import {
  APP_MODEL,
  type BehaviourTable,
  crashModel,
  goodRelease,
  hardwareOfName,
  hardwareSplit,
  nodeProfile,
  usageModel,
} from "../src/rollout/gates/behaviour.js";
import { caughtUp, ingestAt } from "../src/rollout/gates/ingest.js";
import { type GatesResults, writeGatesReport } from "../src/rollout/gates/report.js";
import {
  type BatchRecord,
  canaryCount,
  gatesStrategy,
  lagAtVerdicts,
  planRuns,
  type RunRecord,
  runOutcome,
  summarizeRuns,
} from "../src/rollout/gates/scenario.js";

/** A seeded uniform generator (mulberry32), so that the statistics below are exact every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

const table: BehaviourTable = {
  "1.0": { kind: "good", scale: 1 },
  hog: { kind: "cpu_hog", scale: 1 },
  leak: { kind: "memory_leak", scale: 1 },
  loop: { kind: "crash_loop", scale: 1 },
};

describe("behaviour models (chosen by version, never by node)", () => {
  it("gives a node a fixed level of its own, from its name, and its hardware", () => {
    expect(nodeProfile("gates-pi4-7")).toEqual(nodeProfile("gates-pi4-7"));
    expect(nodeProfile("gates-pi4-7")).not.toEqual(nodeProfile("gates-pi4-8"));
    expect(hardwareOfName("gates-nuc-12")).toBe("nuc");
    expect(hardwareOfName("gates-pi4-12")).toBe("pi4");
    expect(hardwareSplit(2000)).toEqual({ pi4: 1500, nuc: 500 });
    // The per-node spread is what the model says: a log-normal with σ ≈ 0.25 for CPU around 1.
    const cpu = Array.from({ length: 4000 }, (_, i) => Math.log(nodeProfile(`gates-pi4-${i}`).cpu));
    const mean = cpu.reduce((a, b) => a + b, 0) / cpu.length;
    const sd = Math.sqrt(cpu.reduce((a, b) => a + (b - mean) ** 2, 0) / cpu.length);
    expect(Math.abs(mean)).toBeLessThan(0.02);
    expect(sd).toBeGreaterThan(APP_MODEL.nodeSpread.cpu * 0.9);
    expect(sd).toBeLessThan(APP_MODEL.nodeSpread.cpu * 1.1);
    // Levels are independent: of neighbouring names (a batch takes nodes in enrollment order), and
    // CPU of memory (a hash that correlates them made a good version's batch look 28 % worse).
    const correlation = (x: number[], y: number[]) => {
      const mx = x.reduce((a, b) => a + b, 0) / x.length;
      const my = y.reduce((a, b) => a + b, 0) / y.length;
      let sxy = 0;
      let sxx = 0;
      let syy = 0;
      for (let i = 0; i < x.length; i++) {
        sxy += ((x[i] as number) - mx) * ((y[i] as number) - my);
        sxx += ((x[i] as number) - mx) ** 2;
        syy += ((y[i] as number) - my) ** 2;
      }
      return sxy / Math.sqrt(sxx * syy);
    };
    const memory = Array.from({ length: 4000 }, (_, i) => Math.log(nodeProfile(`gates-pi4-${i}`).memory));
    expect(Math.abs(correlation(cpu.slice(0, -1), cpu.slice(1)))).toBeLessThan(0.05);
    expect(Math.abs(correlation(cpu, memory))).toBeLessThan(0.05);
    // The first 20 names are a sample like any other: their median level is near the model's.
    expect(Math.abs(Math.log(median(cpu.slice(0, 20).map(Math.exp))))).toBeLessThan(0.15);
    // A nuc spends less CPU on the same work.
    const nucCpu = median(Array.from({ length: 400 }, (_, i) => nodeProfile(`gates-nuc-${i}`).cpu));
    expect(nucCpu).toBeCloseTo(APP_MODEL.hardware.nuc.cpu, 1);
  });

  it("makes the same node's samples differ by version only: hog ×3 CPU, leak growing, good around the model", () => {
    const node = { hardware: "pi4" as const, cpu: 1, memory: 1 };
    const usage = usageModel(() => table, node, seeded(1));
    const samples = (version: string, runningForMs: number) =>
      Array.from({ length: 2001 }, () => usage("svc", version, runningForMs) as { cpu: number; mem: number });
    const good = samples("1.0", 60_000);
    expect(median(good.map((s) => s.cpu))).toBeCloseTo(APP_MODEL.cpuPermille, -1);
    expect(median(good.map((s) => s.mem)) / APP_MODEL.memoryBytes).toBeCloseTo(1, 1);
    // Noisy: samples are not all alike.
    expect(new Set(good.map((s) => Math.round(s.cpu))).size).toBeGreaterThan(50);
    expect(median(samples("hog", 60_000).map((s) => s.cpu)) / median(good.map((s) => s.cpu))).toBeCloseTo(
      3,
      0,
    );
    expect(median(samples("hog", 60_000).map((s) => s.mem)) / APP_MODEL.memoryBytes).toBeCloseTo(1, 1);
    // The leak grows with the time since the app started, and is the good level at its start.
    expect(median(samples("leak", 0).map((s) => s.mem)) / APP_MODEL.memoryBytes).toBeCloseTo(1, 1);
    const after30s = median(samples("leak", 30_000).map((s) => s.mem));
    expect(after30s - APP_MODEL.memoryBytes).toBeGreaterThan(0.9 * 30 * APP_MODEL.leakBytesPerSecond);
    expect(after30s - APP_MODEL.memoryBytes).toBeLessThan(1.1 * 30 * APP_MODEL.leakBytesPerSecond);
    // A version the table does not know (the fleet's first) is a good one.
    expect(median(samples("unknown", 0).map((s) => s.cpu))).toBeCloseTo(APP_MODEL.cpuPermille, -1);
  });

  it("crash-loops only the crash-loop version: a first run of 15–25 s, then 5–10 s up and 1–2 s down", () => {
    const crashes = crashModel(() => table, seeded(2));
    for (const version of ["1.0", "hog", "leak", "unknown"]) expect(crashes("svc", version, 0)).toBeNull();
    for (let i = 0; i < 200; i++) {
      const first = crashes("svc", "loop", 0);
      expect(first?.afterMs).toBeGreaterThanOrEqual(15_000);
      expect(first?.afterMs).toBeLessThanOrEqual(25_000);
      const next = crashes("svc", "loop", 1 + (i % 5));
      expect(next?.afterMs).toBeGreaterThanOrEqual(5_000);
      expect(next?.afterMs).toBeLessThanOrEqual(10_000);
      expect(next?.downMs).toBeGreaterThanOrEqual(1_000);
      expect(next?.downMs).toBeLessThanOrEqual(2_000);
    }
  });

  it("reads the table when it samples: a version's behaviour is what the driver last set", () => {
    let current: BehaviourTable = { v: { kind: "good", scale: 1 } };
    const usage = usageModel(
      () => current,
      { hardware: "pi4", cpu: 1, memory: 1 },
      () => 0.5,
    );
    const before = usage("svc", "v", 0)?.cpu ?? 0;
    current = { v: { kind: "cpu_hog", scale: 1 } };
    expect(usage("svc", "v", 0)?.cpu).toBeCloseTo(before * APP_MODEL.cpuHogFactor);
  });

  it("drifts good releases by at most ±5 %", () => {
    const random = seeded(3);
    const scales = Array.from({ length: 500 }, () => goodRelease(random).scale);
    expect(Math.min(...scales)).toBeGreaterThanOrEqual(0.95);
    expect(Math.max(...scales)).toBeLessThanOrEqual(1.05);
    expect(Math.max(...scales) - Math.min(...scales)).toBeGreaterThan(0.08);
  });
});

describe("the scenario's plan", () => {
  it("puts the three bad versions after the first three good ones, every label unique", () => {
    const plan = planRuns(20);
    expect(plan).toHaveLength(23);
    expect(plan.slice(0, 7).map((r) => `${r.kind} ${r.label}`)).toEqual([
      "good 2.1.0",
      "cpu_hog 2.1.1-cpu-hog",
      "good 2.2.0",
      "memory_leak 2.2.1-memory-leak",
      "good 2.3.0",
      "crash_loop 2.3.1-crash-loop",
      "good 2.4.0",
    ]);
    expect(new Set(plan.map((r) => r.label)).size).toBe(23);
    expect(plan.map((r) => r.run)).toEqual(Array.from({ length: 23 }, (_, i) => i + 1));
    expect(planRuns(0).map((r) => r.kind)).toEqual(["cpu_hog", "memory_leak", "crash_loop"]);
  });

  it("gates a 1 % canary and a 20 % batch with the console's presets, in a strategy the product accepts", () => {
    expect(canaryCount(2000, 1)).toBe(20);
    expect(canaryCount(100, 1)).toBe(5);
    const strategy = rolloutStrategySchema.parse(
      gatesStrategy({ nodes: 2000, canaryPercent: 1, secondPercent: 20, windowSeconds: 30 }),
    );
    expect(strategy.batches.map((b) => b.count ?? `${b.percent}%`)).toEqual([20, "20%"]);
    for (const batch of strategy.batches) {
      expect(
        batch.gates?.map((g) => `${g.name}:${g.criterion.kind}:${g.windowSeconds}:${g.critical}`),
      ).toEqual(["app-cpu:compare:30:true", "app-memory:compare:30:true", "app-restarts:threshold:30:true"]);
    }
    expect(strategy.batches[0]?.gates?.[0]?.criterion).toMatchObject({ confidence: 0.99, tolerance: 0.2 });
    // The rest goes without gates: no baseline would be left to compare it with.
    expect(strategy.defaults.gates).toEqual([]);
    expect(strategy.gateActions).toEqual({ onFail: "rollback", onInconclusive: "pause" });
  });
});

const gate = (name: string, outcome: string) => ({
  gate: name,
  outcome,
  reason: "",
  canary: { nodes: 20, median: 1 },
  baseline: { nodes: 40, median: 1 },
  pValue: name === "app-restarts" ? null : 0.5,
  relativeDelta: name === "app-restarts" ? null : 0,
  breaching: name === "app-restarts" ? 0 : null,
});
const judged = (batch: number, outcomes: Record<string, string>, dispatched = 20): BatchRecord => {
  const gates = Object.entries(outcomes).map(([name, outcome]) => gate(name, outcome));
  return {
    batch,
    dispatched,
    firstDispatchAt: 0,
    lastDispatchAt: 0,
    gates: {
      outcome: gates.some((g) => g.outcome === "fail")
        ? "fail"
        : gates.every((g) => g.outcome === "pass")
          ? "pass"
          : "inconclusive",
      windowStart: 0,
      windowEnd: 30_000,
      evaluatedAt: 31_000,
      gates,
    },
  };
};
const pass = { "app-cpu": "pass", "app-memory": "pass", "app-restarts": "pass" };
const run = (over: Partial<RunRecord>): RunRecord => ({
  run: 1,
  label: "2.1.0",
  kind: "good",
  behaviour: { kind: "good", scale: 1 },
  status: "completed",
  statusReason: null,
  batches: [
    judged(0, pass),
    judged(1, pass, 400),
    { batch: 2, dispatched: 1580, firstDispatchAt: 0, lastDispatchAt: 0, gates: null },
  ],
  reached: { dispatched: 2000, ran: 2000 },
  resetByBenchmark: false,
  startedAt: 0,
  settledAt: 120_000,
  loadAverage: [1, 1],
  ...over,
});

describe("reading a rollout's outcome and the summary", () => {
  it("says where a gate stopped a version, which gates, and what the rollout did", () => {
    expect(runOutcome(run({}))).toEqual({
      stopped: false,
      stoppedAtBatch: null,
      stoppedBy: null,
      gatesNotPassed: [],
      gatesFailed: [],
      action: "none",
    });
    const hog = run({
      kind: "cpu_hog",
      status: "rolled_back",
      batches: [judged(0, { ...pass, "app-cpu": "fail" })],
      reached: { dispatched: 20, ran: 20 },
    });
    expect(runOutcome(hog)).toEqual({
      stopped: true,
      stoppedAtBatch: 1,
      stoppedBy: "gates",
      gatesNotPassed: ["app-cpu"],
      gatesFailed: ["app-cpu"],
      action: "rolled back",
    });
    const paused = run({
      status: "failed",
      batches: [judged(0, pass), judged(1, { ...pass, "app-memory": "no_data" })],
    });
    expect(runOutcome(paused)).toMatchObject({
      stoppedAtBatch: 2,
      gatesNotPassed: ["app-memory"],
      action: "paused",
    });
    // Stopped without a failed gate: the batch itself failed (a node failed to start it).
    const failedBatch = run({
      kind: "crash_loop",
      status: "rolled_back",
      batches: [{ batch: 0, dispatched: 20, firstDispatchAt: 0, lastDispatchAt: 0, gates: null }],
    });
    expect(runOutcome(failedBatch)).toMatchObject({
      stopped: true,
      stoppedAtBatch: 1,
      stoppedBy: "batch_failure",
    });
  });

  it("counts every good version that did not complete as a false positive, and checks the targets", () => {
    const bad = [
      run({
        run: 2,
        label: "hog",
        kind: "cpu_hog",
        status: "rolled_back",
        batches: [judged(0, { ...pass, "app-cpu": "fail" })],
        reached: { dispatched: 20, ran: 20 },
        settledAt: 50_000,
      }),
      run({
        run: 4,
        label: "leak",
        kind: "memory_leak",
        status: "rolled_back",
        batches: [judged(0, { ...pass, "app-memory": "fail" })],
        reached: { dispatched: 20, ran: 19 },
      }),
      run({
        run: 6,
        label: "loop",
        kind: "crash_loop",
        status: "rolled_back",
        batches: [judged(0, { ...pass, "app-restarts": "fail" })],
        reached: { dispatched: 20, ran: 20 },
      }),
    ];
    const goods = [
      run({ run: 1, settledAt: 100_000 }),
      run({ run: 3, settledAt: 140_000 }),
      run({ run: 5, settledAt: 120_000 }),
    ];
    const summary = summarizeRuns([...bad, ...goods], 2000);
    expect(summary.bad.map((b) => [b.kind, b.stoppedAtBatch, b.gatesNotPassed, b.fleetPercent])).toEqual([
      ["cpu_hog", 1, ["app-cpu"], 1],
      ["memory_leak", 1, ["app-memory"], 1],
      ["crash_loop", 1, ["app-restarts"], 1],
    ]);
    expect(summary.bad[0]?.seconds).toBe(50);
    expect(summary.bad[0]?.verdictSeconds).toBe(31);
    expect(summary.good).toMatchObject({
      runs: 3,
      completed: 3,
      falsePositives: 0,
      rate: 0,
      batchesJudged: 6,
      batchesNotPassed: 0,
      medianSeconds: 120,
    });
    expect(summary.targets).toEqual({
      everyBadStoppedInFirstBatch: true,
      everyBadDetectedInFirstBatch: true,
      noFalsePositives: true,
    });
    // A crash loop paused for lack of data in its canary: stopped, not detected.
    const noData = { "app-cpu": "no_data", "app-memory": "no_data", "app-restarts": "no_data" };
    const blind = summarizeRuns(
      [...bad.slice(0, 2), run({ ...bad[2], status: "failed", batches: [judged(0, noData)] }), ...goods],
      2000,
    );
    expect(blind.targets).toEqual({
      everyBadStoppedInFirstBatch: true,
      everyBadDetectedInFirstBatch: false,
      noFalsePositives: true,
    });
    expect(summary.good).toMatchObject({ compares: 12, significant: 0, significantWithinTolerance: 0 });
    expect(summary.good.largestEffectByBatch).toEqual({ 1: 0, 2: 0 });
    // A big batch finds a small difference significant; the tolerance lets it through.
    const small = judged(1, pass, 400);
    const cpu = small.gates?.gates[0];
    if (cpu) Object.assign(cpu, { pValue: 1e-5, relativeDelta: 0.08 });
    const withSmall = summarizeRuns([run({ batches: [judged(0, pass), small] })], 2000);
    expect(withSmall.good).toMatchObject({ compares: 4, significant: 1, significantWithinTolerance: 1 });
    expect(withSmall.good.largestEffectByBatch).toEqual({ 1: 0, 2: 0.08 });

    // One good version stopped in its second batch, one bad version only in its second batch.
    const worse = summarizeRuns(
      [
        ...bad.slice(0, 2),
        run({
          ...bad[2],
          batches: [judged(0, pass), judged(1, { ...pass, "app-restarts": "fail" }, 400)],
          reached: { dispatched: 420, ran: 420 },
        }),
        ...goods.slice(0, 2),
        run({
          run: 5,
          status: "rolled_back",
          batches: [judged(0, pass), judged(1, { ...pass, "app-cpu": "fail" }, 400)],
        }),
      ],
      2000,
    );
    expect(worse.good).toMatchObject({ falsePositives: 1, rate: 1 / 3, batchesNotPassed: 1 });
    expect(worse.good.stops).toEqual([
      { label: "2.1.0", batch: 2, gates: ["app-cpu"], action: "rolled back" },
    ]);
    expect(worse.targets).toEqual({
      everyBadStoppedInFirstBatch: false,
      everyBadDetectedInFirstBatch: false,
      noFalsePositives: false,
    });
    // A good run that timed out is no pass either.
    expect(summarizeRuns([run({ status: "timed_out" })], 2000).good.falsePositives).toBe(1);
  });
});

describe("how far behind the metrics were", () => {
  it("sums a stream's consumers' backlog from /jsz, pending and unacknowledged", () => {
    const jsz = {
      account_details: [
        {
          stream_detail: [
            {
              name: "EF_UP",
              consumer_detail: [{ name: "gateway", num_pending: 6026, num_ack_pending: 4303 }],
            },
            { name: "OTHER", consumer_detail: [{ name: "x", num_pending: 5 }] },
          ],
        },
        { stream_detail: [{ name: "EF_UP", consumer_detail: null }] },
      ],
    };
    expect(consumerBacklogOf(jsz, "EF_UP")).toBe(10_329);
    expect(consumerBacklogOf(jsz)).toBe(10_334);
    expect(consumerBacklogOf({})).toBe(0);
  });

  it("takes the sample nearest a verdict, and calls a lag within the bound caught up", () => {
    const samples = [
      { at: 1_000, backlog: 10, lagSeconds: 40 },
      { at: 6_000, backlog: 5, lagSeconds: 12 },
      { at: 11_000, backlog: null, lagSeconds: null },
    ];
    expect(ingestAt(samples, 7_000)).toBe(samples[1]);
    expect(ingestAt([], 7_000)).toBeNull();
    expect(caughtUp(samples[1] as (typeof samples)[number], 15)).toBe(true);
    expect(caughtUp(samples[0] as (typeof samples)[number], 15)).toBe(false);
    expect(caughtUp(samples[2] as (typeof samples)[number], 15)).toBe(false);
    const judgedAt = judged(0, pass);
    if (judgedAt.gates) judgedAt.gates.evaluatedAt = 5_500;
    expect(
      lagAtVerdicts([run({ batches: [judgedAt], ingest: { waitedSeconds: 3, samples } }), run({ run: 2 })]),
    ).toEqual([{ run: 1, label: "2.1.0", batch: 1, lagSeconds: 12, backlog: 5 }]);
  });
});

describe("the report", () => {
  it("writes the markdown, the JSON and four SVG charts with the numbers it is given", async () => {
    const runs = [
      run({ run: 1, label: "2.1.0" }),
      run({
        run: 2,
        label: "2.1.1-cpu-hog",
        kind: "cpu_hog",
        status: "rolled_back",
        batches: [judged(0, { ...pass, "app-cpu": "fail" })],
        reached: { dispatched: 20, ran: 20 },
      }),
    ];
    const results: GatesResults = {
      command: "pnpm bench:rollout --scenario gates --nodes 2000",
      profile: "work1",
      commit: "abc1234",
      machine: {
        cpuModel: "Test CPU",
        cores: 2,
        memoryGiB: 24,
        kernel: "6",
        os: "Debian",
        node: "v20",
        date: "",
      },
      at: "2026-11-28T12:00:00.000Z",
      loadAverage: [3.1, 2.5, 2],
      config: {
        nodes: 2000,
        hardware: { pi4: 1500, nuc: 500 },
        goodRuns: 1,
        windowSeconds: 30,
        metricsIntervalSeconds: 5,
        canaryPercent: 1,
        secondPercent: 20,
        hollowProcesses: 2,
        settleSeconds: 10,
        strategy: gatesStrategy({ nodes: 2000, canaryPercent: 1, secondPercent: 20, windowSeconds: 30 }),
      },
      fleet: { enrolled: 2000, online: 2000, enrollSeconds: 80 },
      scenarioSeconds: 1234,
      runs,
      summary: summarizeRuns(runs, 2000),
      usage: [
        {
          component: "gateway",
          phase: "good runs",
          cpuPercentMean: 40,
          cpuPercentMax: 90,
          rssMiBMax: 300,
          pssMiBMax: 280,
        },
      ],
      problems: [],
      notes: ["a note"],
    };
    const dir = mkdtempSync(join(tmpdir(), "gates-report-"));
    try {
      await writeGatesReport(results, dir);
      const markdown = readFileSync(join(dir, "rollout-gates.md"), "utf8");
      expect(markdown).toContain("The whole scenario took 20.6 min");
      expect(markdown).toContain(
        "| CPU hog | `2.1.1-cpu-hog` | yes | 1 | app-cpu failed | 20 (1.0 %) / 20 | rolled back |",
      );
      expect(markdown).toContain("0 false positives in 1 runs");
      expect(markdown).toContain("load average at the end 3.1, 2.5, 2");
      expect(markdown).toContain("- a note");
      for (const chart of ["reached", "pvalues", "effects", "restarts"])
        expect(readFileSync(join(dir, `rollout-gates-${chart}.svg`), "utf8")).toContain("<svg");
      expect(
        JSON.parse(readFileSync(join(dir, "rollout-gates-results.json"), "utf8")).summary.good.runs,
      ).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
