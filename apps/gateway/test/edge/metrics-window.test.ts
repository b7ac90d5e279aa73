import { describe, expect, it } from "vitest";
import {
  classify,
  METRICS_WINDOW,
  type SeenWindow,
  withWritten,
} from "../../src/edge/ingest/metrics-window.js";

const written = (...seqs: number[]): SeenWindow => withWritten({ high: 0, seen: 0n }, seqs);

describe("the metrics window of a node", () => {
  it.each([
    ["a newer report", written(1, 2, 3), 4, "new"],
    ["the newest again", written(1, 2, 3), 3, "duplicate"],
    ["an older one already written", written(1, 2, 3), 2, "duplicate"],
    ["an older one never written (it came late)", written(1, 3), 2, "new"],
    ["the first report", written(), 1, "new"],
    ["one just inside the window", written(1, 70), 70 - METRICS_WINDOW, "new"],
    ["one past the window", written(1, 70), 69 - METRICS_WINDOW, "too_old"],
  ] as const)("%s", (_, window, seq, verdict) => {
    expect(classify(window, seq)).toBe(verdict);
  });

  it("is the same whatever order the reports came in", () => {
    const seqs = [5, 1, 9, 2, 3, 8, 4, 7, 6];
    const inOrder = written(...[...seqs].sort((a, b) => a - b));
    const oneByOne = seqs.reduce((window, seq) => withWritten(window, [seq]), written());
    expect(oneByOne).toEqual(inOrder);
    expect(inOrder).toEqual({ high: 9, seen: (1n << 8n) - 1n });
    for (let seq = 1; seq <= 9; seq++) expect(classify(oneByOne, seq)).toBe("duplicate");
  });

  it("forgets what falls out of the window and stays within 63 bits", () => {
    const window = withWritten(written(...Array.from({ length: 100 }, (_, i) => i + 1)), [300]);
    expect(window.high).toBe(300);
    expect(window.seen).toBe(0n);
    expect(classify(window, 299)).toBe("new");
    const full = written(...Array.from({ length: 200 }, (_, i) => i + 1));
    expect(full.seen).toBe((1n << 63n) - 1n);
    expect(full.seen <= 9223372036854775807n).toBe(true);
  });
});
