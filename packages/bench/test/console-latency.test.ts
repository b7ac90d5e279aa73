import { describe, expect, it } from "vitest";
import { TARGETS } from "../src/console/cases.js";
import { atTarget, distribution, formatMs, meetsTarget, summarizeLatencies } from "../src/console/latency.js";

describe("console benchmark latency summaries", () => {
  const samples = Array.from({ length: 200 }, (_, i) => i + 1); // 1..200 ms

  it("takes nearest-rank percentiles, max and mean", () => {
    expect(summarizeLatencies(samples, 0)).toEqual({
      count: 200,
      errors: 0,
      p50: 100,
      p95: 190,
      p99: 198,
      max: 200,
      mean: 100.5,
    });
    expect(summarizeLatencies([], 3)).toBeNull();
  });

  it("judges API cases by p99 and pages by p95", () => {
    const summary = summarizeLatencies([...Array(98).fill(100), 600, 1200]);
    expect(summary).not.toBeNull();
    if (!summary) return;
    expect(atTarget(summary, TARGETS["REST API"])).toBe(600);
    expect(atTarget(summary, TARGETS.page)).toBe(100);
    expect(meetsTarget(summary, TARGETS["REST API"])).toBe(true);
    expect(meetsTarget({ ...summary, p99: 1001 }, TARGETS["tRPC (console)"])).toBe(false);
    expect(meetsTarget({ ...summary, p95: 501 }, TARGETS.page)).toBe(false);
  });

  it("never counts a case with errors, or an unmeasured one, as meeting its target", () => {
    const summary = summarizeLatencies([1, 2, 3], 1);
    expect(meetsTarget(summary, TARGETS["REST API"])).toBe(false);
    expect(meetsTarget(null, TARGETS.page)).toBe(false);
  });

  it("draws a distribution of 100 points that never goes down", () => {
    const points = distribution([5, 1, 3, 2, 4]);
    expect(points).toHaveLength(100);
    expect(points[0]).toEqual({ percentile: 1, ms: 1 });
    expect(points[99]).toEqual({ percentile: 100, ms: 5 });
    expect(points.every((p, i) => i === 0 || p.ms >= (points[i - 1]?.ms ?? 0))).toBe(true);
    expect(distribution([])).toEqual([]);
  });

  it("formats milliseconds for reading", () => {
    expect(formatMs(3.25)).toBe("3.3 ms");
    expect(formatMs(125.4)).toBe("125 ms");
    expect(formatMs(1234)).toBe("1.23 s");
    expect(formatMs(12_345)).toBe("12 s");
  });
});
