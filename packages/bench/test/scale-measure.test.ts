import { describe, expect, it } from "vitest";
import type { ComponentSample } from "../src/proc.js";
import { type CpuProfile, packageOf, summarizeProfile } from "../src/scale/cpu-profile.js";
import {
  churnSample,
  componentCosts,
  costPerNode,
  cpuByPhase,
  memorySlopes,
  nodeIndexOf,
  slope,
  verdict,
} from "../src/scale/measure.js";

const sample = (
  component: string,
  phase: string,
  at: number,
  cpuPercent: number,
  pssMiB: number,
): ComponentSample => ({
  component,
  phase,
  at,
  cpuPercent,
  pssMiB,
  rssMiB: pssMiB,
  processes: 1,
});

describe("cost per node", () => {
  it("turns mean CPU percent into CPU-ms per node per minute and PSS above the baseline into KiB", () => {
    const samples = [
      sample("gateway", "baseline", 0, 1, 100),
      sample("gateway", "idle", 1, 10, 150),
      sample("gateway", "idle", 2, 20, 150),
      sample("postgres", "baseline", 0, 0, 50),
      sample("postgres", "idle", 1, 5, 60),
      sample("mimir", "idle", 1, 50, 500),
    ];
    const cost = costPerNode(componentCosts(samples, "idle", "baseline"), 1_000);
    // (15 % + 5 %) of a core = 0.2 s/s = 12,000 ms/min over 1,000 nodes; Mimir is not control plane.
    expect(cost.cpuMsPerNodePerMinute).toBeCloseTo(12);
    expect(cost.memoryKiBPerNode).toBeCloseTo((60 * 1024) / 1_000);
    expect(cost.memoryKiBPerNodeTotal).toBeCloseTo((210 * 1024) / 1_000);
    expect(() => costPerNode([], 0)).toThrow(RangeError);
  });

  it("judges against a target, and says when nothing was measured", () => {
    expect(verdict(0.3, 0.4)).toBe("met");
    expect(verdict(0.5, 0.4)).toBe("missed");
    expect(verdict(null, 0.4)).toBe("not measured");
  });
});

describe("CPU by phase", () => {
  it("sums the components of each phase, in the order the phases ran, against the machine's cores", () => {
    const usage = [
      { component: "gateway", phase: "idle", cpuPercentMean: 20 },
      { component: "site leaves", phase: "idle", cpuPercentMean: 40 },
      { component: "gateway", phase: "rollout", cpuPercentMean: 90 },
      { component: "site leaves", phase: "rollout", cpuPercentMean: 100 },
      { component: "hollow agents (Go)", phase: "rollout", cpuPercentMean: 10 },
    ];
    const rows = cpuByPhase(usage, 2);
    expect(rows.map((r) => r.phase)).toEqual(["idle", "rollout"]);
    expect(rows[0]).toMatchObject({ totalPercent: 60, machineShare: 0.3 });
    expect(rows[1]?.totalPercent).toBe(200);
    expect(rows[1]?.machineShare).toBe(1);
    expect(rows[1]?.byComponent["hollow agents (Go)"]).toBe(10);
    expect(rows[0]?.byComponent["hollow agents (Go)"]).toBeUndefined();
  });
});

describe("memory slope", () => {
  it("is the least-squares slope in MiB per hour", () => {
    expect(
      slope([
        { x: 0, y: 1 },
        { x: 1, y: 3 },
        { x: 2, y: 5 },
      ]),
    ).toBeCloseTo(2);
    expect(slope([{ x: 1, y: 1 }])).toBe(0);
    const samples = [0, 1, 2, 3].map((minute) =>
      sample("gateway", "churn", minute * 60_000, 0, 100 + minute),
    );
    const [gateway] = memorySlopes(samples, "churn");
    expect(gateway?.pssMiBPerHour).toBeCloseTo(60);
    expect(gateway?.minutes).toBeCloseTo(3);
  });
});

describe("node index", () => {
  it("reads the index that places a hollow node on its site", () => {
    expect(nodeIndexOf("scale-4711")).toBe(4711);
    expect(() => nodeIndexOf("scale-x")).toThrow();
  });
});

describe("CPU profile summary", () => {
  const profile: CpuProfile = {
    startTime: 0,
    endTime: 4_000_000,
    nodes: [
      { id: 1, callFrame: { functionName: "(idle)", url: "", lineNumber: 0 } },
      {
        id: 2,
        callFrame: {
          functionName: "decode",
          url: "file:///r/node_modules/.pnpm/@nats-io+nats-core@3.0.0/node_modules/@nats-io/nats-core/lib/x.js",
          lineNumber: 9,
        },
      },
      {
        id: 3,
        callFrame: {
          functionName: "write",
          url: "file:///r/apps/gateway/src/edge/liveness/heartbeat-batcher.ts",
          lineNumber: 4,
        },
      },
    ],
    // 1 s per sample; the first second is start-up and skipped.
    samples: [3, 2, 2, 1, 3],
    timeDeltas: [0, 1_000_000, 1_000_000, 1_000_000, 1_000_000],
  };

  it("counts self time after the start-up, by function and by package, idle left out", () => {
    const summary = summarizeProfile(profile, 500);
    expect(summary.windowMs).toBe(4_000);
    expect(summary.busyMs).toBe(3_000);
    expect(summary.byPackage.map((entry) => [entry.fn, entry.selfMs])).toEqual([
      ["@nats-io/nats-core", 2_000],
      ["apps/gateway", 1_000],
    ]);
    expect(summary.top[0]?.fn).toMatch(/^decode \(@nats-io\/nats-core\/lib\/x.js:10\)$/);
  });

  it("names packages from pnpm paths", () => {
    expect(packageOf("file:///r/node_modules/.pnpm/pg@8.1.0/node_modules/pg/lib/client.js")).toBe("pg");
    expect(packageOf("node:internal/streams")).toBe("node internals");
  });
});

describe("churnSample", () => {
  const nodes = Array.from({ length: 20_000 }, (_, i) => i);
  const siteOf = (node: number) => node % 10;

  it("takes as many nodes from every site, unlike a spread over the list (every 100th: one site)", () => {
    const sample = churnSample(nodes, siteOf, 200, 0);
    expect(sample).toHaveLength(200);
    expect(new Set(sample).size).toBe(200);
    const perSite = new Map<number, number>();
    for (const node of sample) perSite.set(siteOf(node), (perSite.get(siteOf(node)) ?? 0) + 1);
    expect([...perSite.values()]).toEqual(Array(10).fill(20));
  });

  it("differs from cycle to cycle and never asks for more than there is", () => {
    const first = churnSample(nodes, siteOf, 200, 0);
    const second = churnSample(nodes, siteOf, 200, 1);
    expect(first.filter((node) => second.includes(node))).toEqual([]);
    expect(churnSample([1, 2, 3], () => 0, 10, 0).sort()).toEqual([1, 2, 3]);
    expect(churnSample([], () => 0, 10, 0)).toEqual([]);
  });
});
