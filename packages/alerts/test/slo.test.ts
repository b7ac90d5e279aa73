import { describe, expect, it } from "vitest";
import { API_LATENCY_SERIES, OrgHistograms, SLO_BUCKETS, sloQueries } from "../src/slo";

const value = (series: ReturnType<OrgHistograms["series"]>, name: string, le?: string) =>
  series.find((s) => s.labels.__name__ === name && (le === undefined || s.labels.le === le))?.samples.at(-1)
    ?.value;

describe("OrgHistograms", () => {
  it("keeps cumulative buckets, count and sum per organization", () => {
    const histograms = new OrgHistograms(API_LATENCY_SERIES);
    histograms.observe("org-a", 0.02, { kind: "query" });
    histograms.observe("org-a", 0.3, { kind: "query" });
    histograms.observe("org-a", 7, { kind: "query" });
    histograms.observe("org-b", 0.001, { kind: "query" });
    const a = histograms.series("org-a", 1_000);
    expect(value(a, `${API_LATENCY_SERIES}_bucket`, "0.01")).toBe(0);
    expect(value(a, `${API_LATENCY_SERIES}_bucket`, "0.025")).toBe(1);
    expect(value(a, `${API_LATENCY_SERIES}_bucket`, "0.5")).toBe(2);
    expect(value(a, `${API_LATENCY_SERIES}_bucket`, "5")).toBe(2);
    expect(value(a, `${API_LATENCY_SERIES}_bucket`, "10")).toBe(3);
    expect(value(a, `${API_LATENCY_SERIES}_bucket`, "+Inf")).toBe(3);
    expect(value(a, `${API_LATENCY_SERIES}_count`)).toBe(3);
    expect(value(a, `${API_LATENCY_SERIES}_sum`)).toBeCloseTo(7.32);
    expect(a.every((s) => s.labels.kind === "query" && s.samples.at(-1)?.timestamp === 1_000)).toBe(true);
    // The first push leads each series in with a zero (rate() needs the start), later ones do not.
    expect(a.every((s) => s.samples.length === 2 && s.samples[0]?.value === 0)).toBe(true);
    expect(histograms.series("org-a", 2_000).every((s) => s.samples.length === 1)).toBe(true);
    expect(a).toHaveLength(SLO_BUCKETS.length + 3);
    // Another organization's calls never appear in this one's series.
    expect(value(histograms.series("org-b", 1_000), `${API_LATENCY_SERIES}_count`)).toBe(1);
    expect(histograms.series("org-c", 1_000)).toEqual([]);
  });

  it("ignores impossible durations and stays within its key bound", () => {
    const histograms = new OrgHistograms("x", 2);
    histograms.observe("org-a", -1);
    histograms.observe("org-a", Number.NaN);
    expect(histograms.organizations()).toEqual([]);
    histograms.observe("org-a", 1, { kind: "query" });
    histograms.observe("org-a", 1, { kind: "mutation" });
    histograms.observe("org-b", 1);
    expect(histograms.organizations()).toEqual(["org-a"]);
  });
});

describe("sloQueries", () => {
  it("reads the p99 from bucket rates over the window", () => {
    expect(sloQueries("6h").apiP99).toBe(
      `histogram_quantile(0.99, sum by (le) (rate(${API_LATENCY_SERIES}_bucket[6h])))`,
    );
  });
});
