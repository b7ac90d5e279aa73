import { describe, expect, it } from "vitest";
import { trafficBetween } from "../src/nats-monitor.js";
import { latenciesFrom } from "../src/pg-events.js";
import { parseProcStat, parseSmapsRollup, treeOf, usageByPhase } from "../src/proc.js";
import { renderBar } from "../src/progress.js";

describe("/proc parsing", () => {
  it("reads ppid and utime+stime after a command name with spaces and parentheses", () => {
    const line =
      "4242 (node (tsx) x) S 4200 4242 4242 0 -1 4194304 100 0 0 0 1234 567 0 0 20 0 11 0 100 1000000 2000 18446744073709551615";
    expect(parseProcStat(line)).toEqual({ pid: 4242, ppid: 4200, cpuTicks: 1234 + 567 });
    expect(() => parseProcStat("garbage")).toThrow(/not a \/proc/);
  });

  it("reads Rss and Pss from smaps_rollup", () => {
    const text =
      "00400000-7fff [rollup]\nRss:              204800 kB\nPss:              102400 kB\nPss_Anon: 1 kB\n";
    expect(parseSmapsRollup(text)).toEqual({ rssKiB: 204800, pssKiB: 102400 });
  });

  it("collects a process tree", () => {
    const stats = new Map(
      [
        [1, 0],
        [10, 1],
        [11, 10],
        [12, 10],
        [13, 11],
        [20, 1],
      ].map(([pid, ppid]) => [pid as number, { pid: pid as number, ppid: ppid as number, cpuTicks: 0 }]),
    );
    expect(treeOf(10, stats).sort()).toEqual([10, 11, 12, 13]);
    expect(treeOf(99, stats)).toEqual([]);
  });

  it("aggregates CPU mean/max and peak memory per component and phase", () => {
    const sample = (component: string, phase: string, cpuPercent: number, rssMiB: number) => ({
      component,
      phase,
      cpuPercent,
      rssMiB,
      pssMiB: rssMiB / 2,
      at: 0,
      processes: 1,
    });
    const usage = usageByPhase([
      sample("nats", "idle", 10, 100),
      sample("nats", "idle", 30, 120),
      sample("nats", "load", 90, 300),
    ]);
    expect(usage).toEqual([
      {
        component: "nats",
        phase: "idle",
        cpuPercentMean: 20,
        cpuPercentMax: 30,
        rssMiBMax: 120,
        pssMiBMax: 60,
      },
      {
        component: "nats",
        phase: "load",
        cpuPercentMean: 90,
        cpuPercentMax: 90,
        rssMiBMax: 300,
        pssMiBMax: 150,
      },
    ]);
  });
});

describe("traffic between two /connz snapshots", () => {
  const connection = (cid: number, inBytes: number, outBytes = 0) => ({
    cid,
    name: `bench-${cid}`,
    inBytes,
    outBytes,
    inMsgs: inBytes / 100,
    outMsgs: 0,
  });

  it("counts only connections present at both ends (same cid)", () => {
    const delta = trafficBetween(
      [connection(1, 1000), connection(2, 500), connection(3, 100)],
      [connection(1, 1800, 50), connection(2, 900), connection(4, 99_999)],
    );
    expect(delta).toEqual({ connections: 2, inBytes: 1200, outBytes: 50, inMsgs: 12, outMsgs: 0 });
  });
});

describe("latencies from Postgres events", () => {
  it("takes each node's first event at or after its own mark", () => {
    const { latencies, missing } = latenciesFrom(
      [
        { nid: "a", at: 1000 },
        { nid: "b", at: 1000 },
        { nid: "c", at: 1000 },
      ],
      [
        { kind: "node:online", nid: "a", at: 500 }, // before the mark: an earlier life
        { kind: "node:online", nid: "a", at: 1250 },
        { kind: "node:online", nid: "a", at: 1900 },
        { kind: "node:online", nid: "b", at: 1000.4 },
      ],
    );
    expect(latencies).toHaveLength(2);
    expect(latencies[0]).toBe(250);
    expect(latencies[1]).toBeCloseTo(0.4, 6);
    expect(missing).toEqual(["c"]);
  });
});

describe("progress bar", () => {
  it("fills in proportion and clamps", () => {
    expect(renderBar(5, 10, 10)).toBe("[#####-----]  50%");
    expect(renderBar(20, 10, 4)).toBe("[####] 100%");
    expect(renderBar(0, 0, 4)).toBe("[----]   0%");
  });
});
