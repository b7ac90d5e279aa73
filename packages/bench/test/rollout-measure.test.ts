import { describe, expect, it } from "vitest";
import type { ComponentSample } from "../src/proc.js";
import type { RolloutFact } from "../src/rollout/instrumentation.js";
import {
  allLatencies,
  cpuSecondsBetween,
  leftBehind,
  measureBatches,
  runningSeries,
  stepEnds,
  updatedTwice,
} from "../src/rollout/measure.js";

const V2 = "v2";
const START = 1_000_000;

/** One controller step at `txStart` dispatching `nids` in `batch`, its writes 10 ms apart. */
function step(txStart: number, batch: number | null, nids: string[], version = V2): RolloutFact[] {
  return nids.flatMap((nid, i) => [
    { kind: "desired" as const, nid, versionId: version, batch: null, txStart, at: txStart + 10 * (i + 1) },
    { kind: "dispatch" as const, nid, versionId: version, batch, txStart, at: txStart + 100 + i },
  ]);
}
const ran = (nid: string, at: number, version = V2): RolloutFact => ({
  kind: "running",
  nid,
  versionId: version,
  batch: null,
  txStart: at,
  at,
});

describe("stepEnds", () => {
  it("is each transaction's last write, reports excluded", () => {
    const facts = [...step(START, 0, ["a", "b"]), ran("a", START + 5_000)];
    expect(stepEnds(facts)).toEqual(new Map([[START, START + 101]]));
  });
});

describe("measureBatches", () => {
  it("times each batch's step and every node from its step's last write to running on the version", () => {
    const facts = [
      ...step(START, 0, ["a", "b"]),
      // a ran the old version before: not the one measured
      ran("a", START + 50, "v1"),
      ran("a", START + 1_101),
      ran("b", START + 3_101),
      ...step(START + 4_000, 1, ["c", "d"]),
      ran("c", START + 4_601),
    ];
    const batches = measureBatches(facts, V2, START);
    expect(batches).toHaveLength(2);
    expect(batches[0]).toMatchObject({
      batch: 0,
      nodes: 2,
      steps: 1,
      commitMs: 101,
      dispatchedAtSeconds: 0,
      notRunning: 0,
      allRunningSeconds: 3.101,
    });
    expect(batches[0]?.toRunning).toMatchObject({ count: 2, p50: 1_000, p99: 3_000, max: 3_000 });
    expect(batches[1]).toMatchObject({ batch: 1, nodes: 2, notRunning: 1, allRunningSeconds: null });
    expect(batches[1]?.toRunning).toMatchObject({ count: 1, p50: 500 });
    expect(allLatencies(facts, V2).sort((x, y) => x - y)).toEqual([500, 1_000, 3_000]);
  });

  it("puts late joiners (no plan batch) last, reports the longest of several steps, ignores other versions", () => {
    const facts = [
      ...step(START + 2_000, null, ["late"]),
      ...step(START, 0, ["a"]),
      ...step(START + 500, 0, ["b", "c", "d"]),
      ...step(START + 9_000, 0, ["x"], "v3"),
    ];
    const batches = measureBatches(facts, V2, START);
    expect(batches.map((batch) => batch.batch)).toEqual([0, null]);
    expect(batches[0]).toMatchObject({ nodes: 4, steps: 2, commitMs: 102, toRunning: null, notRunning: 4 });
  });
});

describe("updatedTwice", () => {
  it("counts a node once whichever witnesses saw it updated twice", () => {
    const facts = [
      ...step(START, 0, ["a", "b", "c"]),
      // b dispatched again by a later step; c's desired version set again
      ...step(START + 5_000, 1, ["b"]),
      {
        kind: "desired" as const,
        nid: "c",
        versionId: V2,
        batch: null,
        txStart: START + 6_000,
        at: START + 6_001,
      },
      // another version does not count
      ...step(START + 7_000, 2, ["a"], "v3"),
    ];
    const agents: Array<{ nid: string; switches: Record<string, number> }> = [
      { nid: "a", switches: { "2.0.0": 1, "3.0.0": 1 } },
      { nid: "b", switches: { "2.0.0": 2 } },
      { nid: "d", switches: { "2.0.0": 2 } },
    ];
    expect(updatedTwice(facts, V2, agents, "2.0.0")).toEqual({
      nodes: 3,
      byDispatch: 1,
      byDesired: 2,
      byAgent: 2,
      examples: ["b", "c", "d"],
    });
    expect(
      updatedTwice(step(START, 0, ["a"]), V2, [{ nid: "a", switches: { "2.0.0": 1 } }], "2.0.0").nodes,
    ).toBe(0);
  });
});

describe("leftBehind", () => {
  it("is every target node not running the version: none, another version, not running", () => {
    const instances = [
      { nid: "ok", state: "running", observedVersionId: V2 },
      { nid: "old", state: "running", observedVersionId: "v1" },
      { nid: "pulling", state: "pulling", observedVersionId: "v1" },
      { nid: "failed", state: "failed", observedVersionId: V2 },
    ];
    expect(leftBehind(["ok", "old", "pulling", "failed", "none"], instances, V2)).toEqual([
      "old",
      "pulling",
      "failed",
      "none",
    ]);
  });
});

describe("runningSeries", () => {
  it("counts each node once, at its first run of the version, by second", () => {
    const facts = [
      ran("a", START + 200),
      ran("b", START + 1_900),
      ran("a", START + 2_500),
      ran("c", START + 900, "v1"),
    ];
    expect(runningSeries(facts, V2, START)).toEqual([
      { seconds: 0, count: 0 },
      { seconds: 1, count: 1 },
      { seconds: 2, count: 2 },
    ]);
    expect(runningSeries([], V2, START)).toEqual([]);
  });
});

describe("cpuSecondsBetween", () => {
  const sample = (at: number, cpuPercent: number, component = "gateway"): ComponentSample => ({
    component,
    at,
    phase: "clean",
    cpuPercent,
    rssMiB: 1,
    pssMiB: 1,
    processes: 1,
  });
  it("sums each interval's CPU over the part of it inside the window", () => {
    const samples = [
      sample(0, 0),
      sample(2_000, 50),
      sample(4_000, 100),
      sample(6_000, 10),
      sample(4_000, 100, "nats-server"),
    ];
    // 0–2 s at 50 %: 1 s; 2–4 s at 100 %: 2 s; 4–6 s at 10 %: 0.2 s.
    expect(cpuSecondsBetween(samples, "gateway", 0, 6_000)).toBeCloseTo(3.2);
    // Half of the first interval, all of the second.
    expect(cpuSecondsBetween(samples, "gateway", 1_000, 4_000)).toBeCloseTo(2.5);
    expect(cpuSecondsBetween(samples, "gateway", 7_000, 9_000)).toBe(0);
  });
});
