import { describe, expect, it } from "vitest";
import {
  cumulativeSeries,
  percentile,
  ratePerSecond,
  spreadSample,
  summarize,
  uplinkPerNode,
} from "../src/stats.js";

describe("percentile (nearest rank)", () => {
  const sorted = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100

  it("picks the sample at ceil(p/100 · n)", () => {
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile(sorted, 0)).toBe(1);
    expect(percentile([10, 20, 30], 50)).toBe(20);
    expect(percentile([10, 20, 30, 40], 50)).toBe(20);
    expect(percentile([10, 20, 30, 40], 51)).toBe(30);
  });

  it("rejects no samples and out-of-range percentiles", () => {
    expect(() => percentile([], 50)).toThrow(RangeError);
    expect(() => percentile(sorted, 101)).toThrow(/0\.\.100/);
    expect(() => percentile(sorted, Number.NaN)).toThrow(RangeError);
  });
});

describe("summarize", () => {
  it("sorts unsorted samples and reports p50/p90/p99/max", () => {
    const samples = Array.from({ length: 1000 }, (_, i) => 1000 - i); // 1000..1
    expect(summarize(samples)).toEqual({ count: 1000, p50: 500, p90: 900, p99: 990, max: 1000 });
    expect(samples[0]).toBe(1000); // the input is left as it was
  });

  it("is null without samples", () => {
    expect(summarize([])).toBeNull();
  });
});

describe("rates and series", () => {
  it("counts intervals between the first and the last event", () => {
    expect(ratePerSecond([0, 500, 1000])).toBe(2);
    expect(ratePerSecond([5000, 0, 10_000])).toBe(0.2);
    expect(ratePerSecond([42])).toBe(0);
  });

  it("builds a cumulative count per second, gaps filled", () => {
    expect(cumulativeSeries([1000, 1100, 3500], 1000)).toEqual([
      { seconds: 0, count: 1 },
      { seconds: 1, count: 2 },
      { seconds: 2, count: 2 },
      { seconds: 3, count: 3 },
    ]);
  });

  it("spreads a sample evenly and deterministically", () => {
    expect(spreadSample([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 5)).toEqual([0, 2, 4, 6, 8]);
    expect(spreadSample([1, 2], 5)).toEqual([1, 2]);
    expect(spreadSample([1, 2], 0)).toEqual([]);
  });
});

describe("uplinkPerNode", () => {
  it("turns bytes over a window into bytes a minute and kbit/s per node", () => {
    // 10 nodes, 75,000 bytes in 3 minutes: 2,500 B/min each = 0.3333 kbit/s.
    const uplink = uplinkPerNode(75_000, 10, 180_000);
    expect(uplink.bytesPerMinute).toBeCloseTo(2500, 6);
    expect(uplink.kbitPerSecond).toBeCloseTo((2500 * 8) / 60 / 1000, 9);
  });

  it("refuses an empty fleet or window", () => {
    expect(() => uplinkPerNode(1, 0, 1000)).toThrow(RangeError);
    expect(() => uplinkPerNode(1, 1, 0)).toThrow(RangeError);
  });
});
