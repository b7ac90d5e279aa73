import { describe, expect, it } from "vitest";
import { renderSvg } from "../src/charts.js";
import { accountDeliveries } from "../src/ha/accounting.js";
import { haChartSpecs, segments } from "../src/ha/charts.js";
import { renderHaReport } from "../src/ha/report.js";
import type { HaBenchResults, KillRecord, TimelineSample } from "../src/ha/results.js";

const T0 = 1_700_000_000_000;

const sample = (second: number, overrides: Partial<TimelineSample> = {}): TimelineSample => ({
  at: T0 + second * 1000,
  gateways: [200, 200],
  consoles: [200, 200],
  nodeCommands: [200, 200],
  session: 200,
  keycloak: 200,
  ingestBacklog: 2,
  agentBacklog: [0, second > 20 ? second - 20 : 0],
  agentsConnected: [10, 10],
  controllerLeasing: second > 20 ? true : null,
  running: second > 20 ? 3 : null,
  online: 20,
  loadAverage: 4,
  ...overrides,
});

const account = accountDeliveries([{ nid: "n1", st: [[1, T0]], mx: [[1, T0]], evicted: 0, pending: 0 }], {
  statusApplied: new Map([["n1", [1]]]),
  finalStatusSeq: new Map([["n1", 1]]),
  mimirSamples: new Map([["n1", [T0]]]),
});

const kill = (target: KillRecord["target"], second: number): KillRecord => ({
  target,
  what: target === "nats" ? "nats-2 (EF_UP's stream leader)" : target,
  at: T0 + second * 1000,
  restartedAt: T0 + second * 1000 + 50,
  readyAt: T0 + second * 1000 + 1_500,
  rolloutBatchesAtKill: 2,
  recovery: {
    serverReady: 1.5,
    gatewaysReady: 2,
    consoleApi: 0,
    nodeCommands: 0,
    session: 0,
    signIn: 0,
    agentsDelivering: 3,
    ingestCaughtUp: 4,
    controller: 1,
    overall: 4,
  },
  deliveries: account,
  seen: { "gateway-1 /readyz": { "HTTP 503": 2 } },
  observations: [
    {
      at: T0 + second * 1000 + 1000,
      probe: "gateway-1 /readyz",
      status: 503,
      detail: '{"status":"not ready"}',
    },
  ],
});

const results: HaBenchResults = {
  command: "pnpm bench:ha --nodes 20",
  commit: "abc1234",
  natsVersion: "2.15.2",
  machine: {
    cpuModel: "Test CPU",
    cores: 2,
    memoryGiB: 24,
    kernel: "6.1",
    os: "Debian GNU/Linux 12",
    node: "v20",
    date: "2026-11-28T12:00:00.000Z",
  },
  loadAverage: [4.2, 5.1],
  config: {
    nodes: 20,
    sites: ["ha-a", "ha-b"],
    natsNodes: 3,
    gateways: 2,
    consoles: 2,
    metricsIntervalS: 10,
    statusRefreshS: 30,
    partitionSeconds: 180,
    killSpacingSeconds: 30,
    rolloutBatches: 11,
  },
  startedAt: T0,
  kills: [kill("nats", 50), kill("gateway", 80)],
  partition: {
    site: "ha-b",
    cutAt: T0 + 20_000,
    restoredAt: T0 + 200_000,
    backlogAtRestore: 180,
    drainedSeconds: 12.5,
    ingestedSeconds: 14,
  },
  rollout: {
    nodes: 20,
    status: "completed",
    startedAt: T0 + 21_000,
    finishedAt: T0 + 230_000,
    batches: 11,
    updatedTwice: { nodes: 0, byDispatch: 0, byDesired: 0, byAgent: 0, examples: [] },
    leftBehind: 0,
    leftBehindExamples: [],
    runningSeries: [
      { seconds: 0, count: 0 },
      { seconds: 100, count: 10 },
      { seconds: 209, count: 20 },
    ],
  },
  deliveries: { perSite: { "ha-a": account, "ha-b": account }, total: account },
  timeline: Array.from({ length: 240 }, (_, second) =>
    sample(second, second >= 50 && second < 52 ? { gateways: [503, 200], ingestBacklog: null } : {}),
  ),
  problems: [],
  notes: ["a note"],
};

describe("the HA report", () => {
  it("states the figures: lost, duplicated and time to recover per kill and for the partition", () => {
    const report = renderHaReport(results, ["ha-chaos-timeline.svg"]);
    expect(report).toContain("**Messages lost: 0. Applied or stored twice: 0.**");
    expect(report).toContain(
      "| kill -9 nats-2 (EF_UP's stream leader) | 0 of 1 status, 0 of 1 metrics | 0 status, 0 metrics | 4.0 s |",
    );
    expect(report).toContain("180 buffered reports delivered 12.5 s after the link returned");
    expect(report).toContain("gateway-1 /readyz: HTTP 503 ×2");
    expect(report).toContain("load average 4.2 at the start, 5.1 at the end");
    expect(report).toContain("![Reports waiting at the agents");
  });

  it("merges each probe's seconds into segments of one state", () => {
    const merged = segments(results.timeline.slice(48, 55), T0, {
      gateway: (s) => (s.gateways[0] === 200 ? "ok" : "5xx"),
    });
    expect(merged).toEqual([
      { probe: "gateway", state: "ok", from: 48, to: 50 },
      { probe: "gateway", state: "5xx", from: 50, to: 52 },
      { probe: "gateway", state: "ok", from: 52, to: 55 },
    ]);
  });

  it("renders every chart to SVG", async () => {
    for (const [name, spec] of Object.entries(haChartSpecs(results))) {
      const svg = await renderSvg(spec);
      expect(svg, name).toMatch(/^<svg/);
    }
  });
});
