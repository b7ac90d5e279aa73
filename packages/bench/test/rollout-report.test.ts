import { describe, expect, it } from "vitest";
import { renderSvg } from "../src/charts.js";
import { rolloutChartSpecs } from "../src/rollout/charts.js";
import { renderRolloutReport } from "../src/rollout/report.js";
import type { RolloutBenchResults, RolloutRun } from "../src/rollout/results.js";

function run(overrides: Partial<RolloutRun> = {}): RolloutRun {
  return {
    name: "clean",
    versionLabel: "1.0.0",
    nodes: 100,
    status: "completed",
    wallSeconds: 21.5,
    batches: [0, 1, 2, 3, 4].map((batch) => ({
      batch,
      nodes: 20,
      steps: 1,
      commitMs: 80 + batch,
      dispatchedAtSeconds: batch * 4,
      toRunning: { count: 20, p50: 1_200 + batch, p90: 2_000, p99: 3_400 + batch, max: 3_500 },
      notRunning: 0,
      allRunningSeconds: batch * 4 + 3.5,
    })),
    toRunning: { count: 100, p50: 1_250, p90: 2_000, p99: 3_404, max: 3_500 },
    controllerCpuSeconds: 12.34,
    controllerCpuPercentMean: 57.4,
    hub: {
      inBytes: 110 * 1024 ** 2,
      outBytes: 220 * 1024 ** 2,
      toAgentsBytes: 105 * 1024 ** 2,
      artifactBytes: 100 * 1024 ** 2,
    },
    updatedTwice: { nodes: 0, byDispatch: 0, byDesired: 0, byAgent: 0, examples: [] },
    leftBehind: 0,
    kill: null,
    loadAverage: [3.2, 4.5],
    runningSeries: [
      { seconds: 0, count: 0 },
      { seconds: 5, count: 40 },
      { seconds: 21, count: 100 },
    ],
    ...overrides,
  };
}

const killed = (overrides: Partial<RolloutRun> = {}) =>
  run({
    name: "kill -9 mid-batch",
    versionLabel: "2.0.0",
    wallSeconds: 33,
    kill: {
      batch: 2,
      atSeconds: 9.5,
      batchRunningAtKill: 8,
      batchNodes: 20,
      gatewayReadySeconds: 6.2,
      resumeSeconds: 7.4,
      resumeEvent: "batch_finished",
      leaseMs: 5_000,
    },
    ...overrides,
  });

function fixture(overrides: Partial<RolloutBenchResults> = {}): RolloutBenchResults {
  return {
    command: "pnpm bench:rollout --nodes 100",
    commit: "abc1234",
    natsVersion: "2.15.2",
    machine: {
      cpuModel: "Test CPU",
      cores: 2,
      memoryGiB: 24,
      kernel: "6.1.0",
      os: "Debian GNU/Linux 12",
      node: "v20.0.0",
      date: "2026-01-02T03:04:05.000Z",
    },
    config: {
      nodes: 100,
      hollowProcesses: 1,
      batches: 5,
      artifactBytes: 1024 * 1024,
      chunkBytes: 128 * 1024,
      rolloutTickMs: 1_000,
      leaseMs: 5_000,
      timeoutSeconds: 600,
    },
    enrollment: { enrolled: 100, failures: 0, seconds: 4, perSecond: 25 },
    online: { nodes: 100, seconds: 3.2 },
    runs: [run(), killed()],
    usage: [
      {
        component: "gateway",
        phase: "clean",
        cpuPercentMean: 57.4,
        cpuPercentMax: 99,
        rssMiBMax: 200,
        pssMiBMax: 180,
      },
      {
        component: "gateway",
        phase: "enroll",
        cpuPercentMean: 80,
        cpuPercentMax: 99,
        rssMiBMax: 200,
        pssMiBMax: 180,
      },
    ],
    timeline: [
      {
        component: "gateway",
        at: 1_000,
        phase: "clean",
        cpuPercent: 40,
        rssMiB: 200,
        pssMiB: 180,
        processes: 2,
      },
      {
        component: "nats-server",
        at: 1_000,
        phase: "clean",
        cpuPercent: 10,
        rssMiB: 30,
        pssMiB: 30,
        processes: 1,
      },
      {
        component: "postgres",
        at: 1_000,
        phase: "clean",
        cpuPercent: 10,
        rssMiB: 30,
        pssMiB: 30,
        processes: 1,
      },
    ],
    problems: [],
    notes: [],
    ...overrides,
  };
}

describe("the rollout report", () => {
  it("states the command, the machine and every number asked for, per run and per batch", () => {
    const report = renderRolloutReport(fixture(), [
      "rollout-running-over-time.svg",
      "rollout-batch-latency.svg",
    ]);
    expect(report).toContain("Written by `pnpm bench:rollout --nodes 100` on 2026-01-02 (commit abc1234)");
    expect(report).toContain("| CPU | Test CPU, 2 cores");
    expect(report).toContain("**1.0 MiB file uploaded**");
    expect(report).toContain(
      "| clean: dispatch committed → running, per node | p50 1250 ms, p99 3404 ms; worst batch p99 3404 ms | p99 ≤ 5 s: meets the target |",
    );
    expect(report).toContain("| clean: whole rollout, start → completed | 21.5 s |");
    expect(report).toContain("| clean: controller (gateway) CPU | 12.3 CPU-s, 57.4 % of a core on average |");
    expect(report).toContain("to the agents 105.0 MiB for 100.0 MiB of artifact (1.05×)");
    expect(report).toContain("| kill -9 mid-batch: nodes updated twice | 0 | 0: meets the target |");
    expect(report).toContain("| kill -9 mid-batch: nodes left behind | 0 of 100 | 0: meets the target |");
    expect(report).toContain(
      "| kill -9 mid-batch: time to resume (kill → the restarted controller holds the rollout again) | 7.4 s (gateway ready again after 6.2 s; lease 5.0 s) |",
    );
    expect(report).toContain(
      "| batch 3 | 20 | 82 ms | 8.0 s | 1202 ms | 2000 ms | 3402 ms | 3500 ms | 0 | 11.5 s |",
    );
    expect(report).toContain("in batch 3 with\n8 of its 20 nodes running");
    expect(report).toContain(
      "| clean: machine load (1-min load average, start → end) | 3.2 → 4.5 on 2 cores | – |",
    );
    expect(report).toContain("| gateway | clean | 57.4 % | 99.0 % | 180 MiB |");
    // Usage outside the rollouts (enrollment) is not in the rollout table; unwritten charts are not linked.
    expect(report).not.toContain("| gateway | enroll |");
    expect(report).toContain("![Nodes running the new version over time](rollout-running-over-time.svg)");
    expect(report).not.toContain("rollout-controller-cpu.svg");
    expect(report).not.toContain("## Problems in this run");
  });

  it("flags every missed target and lists the problems", () => {
    const slow = run({
      batches: [
        {
          ...(run().batches[0] as RolloutRun["batches"][number]),
          toRunning: { count: 20, p50: 4_000, p90: 6_000, p99: 12_000, max: 13_000 },
        },
      ],
    });
    const report = renderRolloutReport(
      fixture({
        runs: [
          slow,
          killed({
            status: "failed",
            wallSeconds: null,
            leftBehind: 3,
            updatedTwice: { nodes: 2, byDispatch: 0, byDesired: 1, byAgent: 2, examples: ["a", "b"] },
            kill: { ...(killed().kill as NonNullable<RolloutRun["kill"]>), resumeSeconds: null },
          }),
        ],
        problems: ["kill -9 mid-batch: the rollout did not complete (status failed)."],
        notes: ["A note."],
      }),
      [],
    );
    expect(report).toContain("worst batch p99 12.0 s | p99 ≤ 5 s: **misses the target**");
    expect(report).toContain(
      "| kill -9 mid-batch: whole rollout, start → completed | **not completed** (status failed) |",
    );
    expect(report).toContain("| kill -9 mid-batch: nodes updated twice | 2 | 0: **misses the target** |");
    expect(report).toContain(
      "| kill -9 mid-batch: nodes left behind | 3 of 100 | 0: **misses the target** |",
    );
    expect(report).toContain(
      "time to resume (kill → the restarted controller holds the rollout again) | – (gateway ready again after 6.2 s;",
    );
    expect(report).toContain("- kill -9 mid-batch: the rollout did not complete (status failed).");
    expect(report).toContain("- A note.");
  });

  it("does not call the nodes of a rollout still moving at the deadline left behind", () => {
    const report = renderRolloutReport(
      fixture({
        runs: [
          killed({
            status: "running",
            wallSeconds: null,
            leftBehind: 3961,
            kill: { ...(killed().kill as NonNullable<RolloutRun["kill"]>) },
          }),
        ],
        problems: ["kill -9 mid-batch: the rollout did not complete (status running)."],
      }),
      [],
    );
    expect(report).toContain(
      '| kill -9 mid-batch: nodes not yet on the version when the benchmark stopped (the rollout was still moving, so not "left behind") | 3961 of 100 | – |',
    );
    expect(report).not.toContain("nodes left behind |");
  });
});

describe("rollout charts", () => {
  it("renders every chart to SVG with the runs, batches and the kill in it", async () => {
    const specs = rolloutChartSpecs(fixture());
    expect(Object.keys(specs).sort()).toEqual(["batch-latency", "controller-cpu", "running-over-time"]);
    const [running, latency, cpu] = await Promise.all(
      ["running-over-time", "batch-latency", "controller-cpu"].map((name) => {
        const spec = specs[name];
        if (!spec) throw new Error(`chart ${name} missing`);
        return renderSvg(spec);
      }),
    );
    expect(running).toContain("<svg");
    expect(running).toContain("kill -9 mid-batch");
    expect(latency).toContain("batch 5");
    expect(latency).toContain("clean p99");
    expect(cpu).toContain("nats-server");
    expect(cpu).not.toContain("postgres");
  });
});
