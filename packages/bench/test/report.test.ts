import { describe, expect, it } from "vitest";
import { chartSpecs, renderSvg } from "../src/charts.js";
import { renderReport } from "../src/report.js";
import { type BenchResults, percentileCurve } from "../src/results.js";

function fixture(overrides: Partial<BenchResults> = {}): BenchResults {
  return {
    command: "pnpm bench:edge --nodes 100 --hollow-processes 2",
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
      hollowProcesses: 2,
      connectPerSecond: 500,
      idleSeconds: 180,
      restartSample: 10,
      heartbeatSeconds: 30,
      metricsSeconds: 60,
      livenessFlushMs: 2000,
    },
    enrollment: { enrolled: 100, failures: 0, seconds: 2, perSecond: 50 },
    fleetSeries: [
      { seconds: 0, count: 10, series: "enrolled" },
      { seconds: 1, count: 100, series: "enrolled" },
      { seconds: 2, count: 100, series: "online" },
    ],
    latency: {
      connectToOnline: { count: 100, p50: 120, p90: 200, p99: 340, max: 400 },
      desiredToRunning: { count: 100, p50: 300, p90: 420, p99: 512, max: 600 },
      stopToOffline: { count: 10, p50: 61_000, p90: 70_000, p99: 72_000, max: 72_000 },
      restartToOnline: null,
    },
    latencyCurves: percentileCurve("desired → running", [300, 420, 512]),
    offlineBoundMs: 75_000,
    rollout: { nodes: 100, seconds: 2, setPerSecond: 50, allRunningSeconds: 3 },
    allOnlineSeconds: 1.5,
    idleUplink: {
      windowSeconds: 180,
      connections: 100,
      inBytes: 75_000,
      outBytes: 9_000,
      inMsgs: 900,
      bytesPerMinute: 250,
      kbitPerSecond: 0.0333,
      msgsPerMinute: 3,
      outBytesPerMinute: 30,
    },
    usage: [
      {
        component: "nats-server",
        phase: "idle",
        cpuPercentMean: 1.5,
        cpuPercentMax: 3,
        rssMiBMax: 40,
        pssMiBMax: 38,
      },
    ],
    timeline: [
      {
        component: "nats-server",
        phase: "idle",
        at: 1000,
        cpuPercent: 1,
        rssMiB: 40,
        pssMiB: 38,
        processes: 1,
      },
      {
        component: "nats-server",
        phase: "idle",
        at: 3000,
        cpuPercent: 2,
        rssMiB: 41,
        pssMiB: 39,
        processes: 1,
      },
    ],
    hollowRssKiBPerNode: 36.5,
    hollowBaselineMiB: 120,
    referenceAgent: [{ variant: "bundle", rssMiBLast: 64.2, rssMiBMax: 66 }],
    gatewayCounters: { edgefleet_gateway_desired_full_lists_total: 0 },
    problems: [],
    notes: [],
    ...overrides,
  };
}

describe("the markdown report", () => {
  it("states the numbers, the machine, the command and each target's verdict", () => {
    const report = renderReport(fixture(), ["edge-data-path-latency.svg"]);
    expect(report).toContain("`pnpm bench:edge --nodes 100 --hollow-processes 2`");
    expect(report).toContain("| CPU | Test CPU, 2 cores");
    expect(report).toContain("| enrollment rate | 50.0 nodes/s (100 in 2.0 s) |");
    expect(report).toContain("p50 300 ms, p99 512 ms");
    expect(report).toContain("| agent stopped → node offline | 10 | 61.0 s | 70.0 s | 72.0 s | 72.0 s |");
    expect(report).toContain("250.0 B/min = 0.0333 kbit/s | ≤ 0.05 kbit/s: meets the target");
    expect(report).toContain("64.2 MiB (max 66.0) | ≤ 40 MB: **misses the target**");
    expect(report).toContain("| offline agent restarted → node online | – |");
    expect(report).toContain("![Latency distributions](edge-data-path-latency.svg)");
    // Charts that were not written are not linked.
    expect(report).not.toContain("edge-data-path-cpu.svg");
    expect(report).toContain("In this run, every phase completed for every node.");
  });

  it("flags an uplink over the target and lists what did not hold", () => {
    const report = renderReport(
      fixture({
        idleUplink: {
          ...(fixture().idleUplink as NonNullable<BenchResults["idleUplink"]>),
          bytesPerMinute: 600,
          kbitPerSecond: 0.08,
        },
        problems: ["3 nodes never came online within 120 s."],
        notes: ["At 10,000 nodes the connect phase stalled."],
      }),
      [],
    );
    expect(report).toContain("0.0800 kbit/s | ≤ 0.05 kbit/s: **misses the target**");
    expect(report).toContain("- 3 nodes never came online within 120 s.");
    expect(report).toContain("- At 10,000 nodes the connect phase stalled.");
  });
});

describe("reference agent memory in the report", () => {
  it("splits RSS into anonymous and file-backed, beside an empty Node process", () => {
    const report = renderReport(
      fixture({
        referenceAgent: [
          {
            variant: "bundle",
            rssMiBLast: 50.4,
            rssMiBMax: 53,
            anonymousMiB: 13,
            fileBackedMiB: 37.4,
            pssMiB: 14.3,
          },
        ],
        emptyNodeMemory: { rssMiB: 40.6, anonymousMiB: 6.2, fileBackedMiB: 34.4 },
      }),
      [],
    );
    expect(report).toContain("| bundle | 50.4 MiB | 13.0 MiB | 37.4 MiB | 14.3 MiB |");
    expect(report).toContain("| 40.6 MiB | 6.2 MiB | 34.4 MiB | – |");
    expect(renderReport(fixture(), [])).not.toContain("### Reference agent memory");
  });
});

describe("the reconnect storm in the report", () => {
  const storm = {
    nodes: 100,
    resynced: 100,
    serverDownMs: 850,
    convergedSeconds: 12.5,
    resync: { count: 100, p50: 4_000, p90: 9_000, p99: 12_000, max: 12_400 },
    fullLists: 0,
    helloDeltas: 0,
    hellos: 104,
  };

  it("meets the target when all resynced within 60 s without a re-list", () => {
    const report = renderReport(fixture({ reconnectStorm: storm }), []);
    expect(report).toContain(
      "12.5 s for 100 nodes, 0 full re-lists | ≤ 60 s, no full re-list: meets the target",
    );
    expect(report).toContain(
      "| hub restarted → agent resynced (reconnect storm) | 100 | 4000 ms | 9000 ms | 12.0 s |",
    );
    expect(report).toContain("| full re-lists | 0 |");
  });

  it("misses it with a re-list, or with nodes that never came back", () => {
    expect(renderReport(fixture({ reconnectStorm: { ...storm, fullLists: 3 } }), [])).toContain(
      "3 full re-lists | ≤ 60 s, no full re-list: **misses the target**",
    );
    expect(
      renderReport(fixture({ reconnectStorm: { ...storm, resynced: 90, convergedSeconds: null } }), []),
    ).toContain(
      "**90 of 100** within the timeout, 0 full re-lists | ≤ 60 s, no full re-list: **misses the target**",
    );
    expect(renderReport(fixture(), [])).toContain("| reconnect storm | not measured |");
  });
});

describe("charts", () => {
  it("renders every chart to SVG with the data's series in it", async () => {
    const specs = chartSpecs(fixture());
    expect(Object.keys(specs).sort()).toEqual(["cpu", "fleet-over-time", "latency", "memory"]);
    const fleet = specs["fleet-over-time"];
    const latency = specs.latency;
    if (!fleet || !latency) throw new Error("charts missing");
    const svg = await renderSvg(fleet);
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain("enrolled");
    expect(svg).toContain("online");
    expect(await renderSvg(latency)).toContain("desired → running");
  });

  it("gives the value at each whole percentile", () => {
    const curve = percentileCurve("x", [30, 10, 20]);
    expect(curve).toHaveLength(101);
    expect(curve[0]).toEqual({ metric: "x", percentile: 0, ms: 10 });
    expect(curve[50]?.ms).toBe(20);
    expect(curve[100]?.ms).toBe(30);
  });
});
