import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Gate, gateSchema, judgeBatch, judgeGate, mannWhitneyU, type NodeSample } from "../src";

/** scipy.stats.mannwhitneyu(x, y, method="asymptotic", alternative=…) on scipy 1.16 (use_continuity=True). */
const SCIPY = [
  { x: [19, 22, 16, 29, 24], y: [20, 11, 17, 12], alternative: "two-sided", u: 17, p: 0.11134688653314041 },
  {
    x: [1, 2, 2, 3, 3, 3, 4],
    y: [3, 4, 4, 5, 5, 6, 7, 7],
    alternative: "two-sided",
    u: 3.5,
    p: 0.004793348746185457,
  },
  {
    x: [1, 2, 2, 3, 3, 3, 4],
    y: [3, 4, 4, 5, 5, 6, 7, 7],
    alternative: "less",
    u: 3.5,
    p: 0.0023966743730927287,
  },
  {
    x: [0.5, 0.52, 0.49, 0.51, 0.5, 0.53],
    y: [0.2, 0.21, 0.19, 0.2, 0.22, 0.18, 0.2, 0.21],
    alternative: "greater",
    u: 48,
    p: 0.0011289087071572538,
  },
  { x: [1, 1, 1, 1], y: [1, 1, 1, 1, 1], alternative: "two-sided", u: 10, p: 1 },
] as const;

describe("Mann–Whitney U (normal approximation, continuity and tie correction)", () => {
  it.each(SCIPY)("matches scipy for %#", ({ x, y, alternative, u, p }) => {
    const result = mannWhitneyU(x, y, alternative);
    expect(result.u).toBe(u);
    expect(result.pValue).toBeCloseTo(p, 6);
  });

  const sample = fc.array(fc.integer({ min: -50, max: 50 }), { minLength: 1, maxLength: 30 });

  it("U of x and U of y add up to n1·n2, and p is a probability", () => {
    fc.assert(
      fc.property(sample, sample, (x, y) => {
        const a = mannWhitneyU(x, y);
        const b = mannWhitneyU(y, x);
        expect(a.u + b.u).toBe(x.length * y.length);
        expect(a.pValue).toBeGreaterThanOrEqual(0);
        expect(a.pValue).toBeLessThanOrEqual(1);
        expect(a.pValue).toBeCloseTo(b.pValue, 12);
      }),
    );
  });

  it("the two-sided p is twice the smaller one-sided p (capped at 1)", () => {
    fc.assert(
      fc.property(sample, sample, (x, y) => {
        const two = mannWhitneyU(x, y, "two-sided").pValue;
        const greater = mannWhitneyU(x, y, "greater").pValue;
        const less = mannWhitneyU(x, y, "less").pValue;
        expect(two).toBeCloseTo(Math.min(1, 2 * Math.min(greater, less)), 10);
      }),
    );
  });

  it("depends on ranks only: a shift and a positive scale of both samples change nothing", () => {
    fc.assert(
      fc.property(
        sample,
        sample,
        fc.integer({ min: -1000, max: 1000 }),
        fc.integer({ min: 1, max: 100 }),
        (x, y, shift, scale) => {
          const moved = (v: number[]) => v.map((n) => n * scale + shift);
          expect(mannWhitneyU(moved(x), moved(y), "greater")).toEqual(mannWhitneyU(x, y, "greater"));
        },
      ),
    );
  });

  it("refuses empty and non-finite samples", () => {
    expect(() => mannWhitneyU([], [1])).toThrow(RangeError);
    expect(() => mannWhitneyU([1, Number.NaN], [1])).toThrow(RangeError);
  });
});

/** A deterministic pseudo-random generator (mulberry32), so the noisy samples are fixed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function samples(prefix: string, values: number[]): NodeSample[] {
  return values.map((value, i) => ({ nodeId: `${prefix}${i}`, value }));
}

function noisy(seed: number, count: number, center: number, spread: number): number[] {
  const next = random(seed);
  return Array.from({ length: count }, () => center + (next() - 0.5) * 2 * spread);
}

const compareGate = (criterion: Record<string, unknown> = {}, critical = true): Gate =>
  gateSchema.parse({
    name: "app-cpu",
    metric: { preset: "app_cpu" },
    criterion: { kind: "compare", ...criterion },
    critical,
  });

describe("judgeGate: canary vs baseline", () => {
  const baseline = samples("b", noisy(1, 20, 0.2, 0.05));

  it("passes identical samples", () => {
    const verdict = judgeGate(
      compareGate(),
      samples(
        "c",
        baseline.map((s) => s.value),
      ),
      baseline,
    );
    expect(verdict.outcome).toBe("pass");
    expect(verdict.compare?.pValue).toBeGreaterThan(0.4);
    expect(verdict.compare?.delta).toBe(0);
  });

  it("fails a canary shifted well past the tolerance, with the numbers", () => {
    const canary = samples("c", noisy(2, 10, 0.6, 0.05));
    const verdict = judgeGate(compareGate(), canary, baseline);
    expect(verdict.outcome).toBe("fail");
    expect(verdict.compare?.pValue).toBeLessThan(0.001);
    expect(verdict.compare?.relativeDelta).toBeGreaterThan(1.5);
    expect(verdict.canary.nodes).toBe(10);
    expect(verdict.baseline.nodes).toBe(20);
    expect(verdict.reason).toMatch(/worse than the baseline: canary median 0\.\d+ vs baseline 0\.\d+/);
  });

  it("passes noisy samples of the same distribution: false positives ≤ 1 % at the default confidence (0.99)", () => {
    let falsePositives = 0;
    for (let seed = 10; seed < 410; seed++) {
      const verdict = judgeGate(compareGate(), samples("c", noisy(seed, 10, 0.2, 0.05)), baseline);
      if (verdict.outcome !== "pass") falsePositives++;
    }
    expect(falsePositives / 400).toBeLessThanOrEqual(0.01);
    // At 0.95 the same canaries fail more often: the confidence is what trades them off.
    let at95 = 0;
    for (let seed = 10; seed < 410; seed++) {
      const verdict = judgeGate(
        compareGate({ confidence: 0.95 }),
        samples("c", noisy(seed, 10, 0.2, 0.05)),
        baseline,
      );
      if (verdict.outcome !== "pass") at95++;
    }
    expect(at95).toBeGreaterThan(falsePositives);
  });

  it("passes a significant shift that stays within the tolerance or under minDelta", () => {
    const canary = samples("c", noisy(3, 10, 0.215, 0.005));
    const tight = samples("b", noisy(4, 20, 0.2, 0.005));
    expect(judgeGate(compareGate({ tolerance: 0.1 }), canary, tight).outcome).toBe("pass");
    expect(judgeGate(compareGate({ tolerance: 0.01 }), canary, tight).outcome).toBe("fail");
    expect(judgeGate(compareGate({ tolerance: 0.01, minDelta: 0.05 }), canary, tight).outcome).toBe("pass");
  });

  it("judges only the bad direction unless told `either`", () => {
    const lower = samples("c", noisy(5, 10, 0.05, 0.01));
    expect(judgeGate(compareGate({ worse: "higher" }), lower, baseline).outcome).toBe("pass");
    expect(judgeGate(compareGate({ worse: "lower" }), lower, baseline).outcome).toBe("fail");
    expect(judgeGate(compareGate({ worse: "either" }), lower, baseline).outcome).toBe("fail");
  });

  it("says no data when a cohort has none, and inconclusive with too few nodes", () => {
    expect(judgeGate(compareGate(), [], baseline).outcome).toBe("no_data");
    expect(judgeGate(compareGate(), samples("c", [0.9]), []).outcome).toBe("no_data");
    const few = judgeGate(compareGate({ minNodes: 3 }), samples("c", [0.9, 0.95]), baseline);
    expect(few.outcome).toBe("inconclusive");
    expect(few.reason).toContain("too few nodes");
    // Values that are not numbers (NaN from a division by zero in PromQL) are no data.
    expect(judgeGate(compareGate(), samples("c", [Number.NaN]), baseline).outcome).toBe("no_data");
  });

  it("fails any rise from a zero baseline (restarts) but not zero against zero", () => {
    const zero = samples("b", Array(10).fill(0));
    const restarting = samples("c", [3, 4, 5, 2, 6]);
    const verdict = judgeGate(compareGate(), restarting, zero);
    expect(verdict.outcome).toBe("fail");
    expect(verdict.compare?.relativeDelta).toBeNull();
    expect(judgeGate(compareGate(), samples("c", Array(5).fill(0)), zero).outcome).toBe("pass");
  });

  it("never fails a canary whose every value is at or below the baseline's minimum (worse = higher)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 100, noNaN: true }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 40 }),
        (base, fractions) => {
          const floor = Math.min(...base);
          const canary = fractions.map((f) => f * floor);
          expect(judgeGate(compareGate(), samples("c", canary), samples("b", base)).outcome).not.toBe("fail");
        },
      ),
    );
  });

  it("does not depend on the order of the nodes", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 10, noNaN: true }), { minLength: 3, maxLength: 20 }),
        fc.array(fc.double({ min: 0, max: 10, noNaN: true }), { minLength: 3, maxLength: 20 }),
        (c, b) => {
          const canary = samples("c", c);
          const base = samples("b", b);
          const a = judgeGate(compareGate(), canary, base);
          const reversed = judgeGate(compareGate(), [...canary].reverse(), [...base].reverse());
          expect(reversed).toEqual(a);
        },
      ),
    );
  });
});

describe("judgeGate: absolute threshold", () => {
  const gate = (criterion: Record<string, unknown>) =>
    gateSchema.parse({
      name: "cpu-max",
      metric: { preset: "app_cpu" },
      criterion: { kind: "threshold", ...criterion },
    });

  it("fails when more nodes than failureLimit are outside the bounds, naming them", () => {
    const canary = samples("c", [0.1, 0.2, 0.9, 0.95]);
    const strict = judgeGate(gate({ max: 0.5 }), canary, []);
    expect(strict.outcome).toBe("fail");
    expect(strict.threshold?.breaching).toEqual(["c2", "c3"]);
    expect(strict.reason).toContain("2 of 4 nodes outside ≤ 0.500");
    expect(judgeGate(gate({ max: 0.5, failureLimit: 2 }), canary, []).outcome).toBe("pass");
    expect(judgeGate(gate({ min: 0.15, max: 1 }), canary, []).outcome).toBe("fail");
  });

  it("says no data for a batch without samples", () => {
    expect(judgeGate(gate({ max: 1 }), [], samples("b", [0.1])).outcome).toBe("no_data");
  });
});

describe("judgeBatch", () => {
  const verdict = (
    gate: string,
    outcome: "pass" | "fail" | "inconclusive" | "no_data",
    critical: boolean,
  ) => ({
    ...judgeGate(compareGate({}, critical), [], []),
    gate,
    outcome,
    critical,
  });

  it("passes only when every gate passes", () => {
    expect(judgeBatch([verdict("a", "pass", true), verdict("b", "pass", false)]).outcome).toBe("pass");
  });

  it("fails on a critical gate's failure", () => {
    const result = judgeBatch([verdict("a", "fail", true), verdict("b", "pass", false)]);
    expect(result.outcome).toBe("fail");
    expect(result.reason).toContain("critical gate a: fail");
  });

  it("is inconclusive on a non-critical failure, and on no data or too few nodes anywhere (never a silent pass)", () => {
    expect(judgeBatch([verdict("a", "fail", false), verdict("b", "pass", true)]).outcome).toBe(
      "inconclusive",
    );
    expect(judgeBatch([verdict("a", "no_data", true)]).outcome).toBe("inconclusive");
    expect(judgeBatch([verdict("a", "inconclusive", false)]).outcome).toBe("inconclusive");
    expect(judgeBatch([verdict("a", "no_data", false), verdict("b", "fail", true)]).outcome).toBe("fail");
  });
});
