import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  baselineSize,
  type CohortNode,
  chooseBaseline,
  foreignOrganizationMatcher,
  gateChartQuery,
  gateQuery,
  gateSchema,
  proportionalShares,
} from "../src";

const node = (id: string, siteId: string | null, hw?: string): CohortNode => ({
  id,
  siteId,
  labels: hw ? { hw } : {},
});

describe("chooseBaseline", () => {
  it("prefers nodes of the canary's site and hardware, then its hardware, then its site, then any", () => {
    const canary = [node("c1", "s1", "pi4"), node("c2", "s1", "pi4")];
    const candidates = [
      node("a-other", "s9", "x86"),
      node("b-site", "s1", "x86"),
      node("c-hw", "s2", "pi4"),
      node("d-both", "s1", "pi4"),
      node("e-both", "s1", "pi4"),
    ];
    const baseline = chooseBaseline({ canary, candidates });
    // 2 canary nodes → 10 wanted, 5 available: all of them, best matches first.
    expect(baseline.nodeIds).toEqual(["d-both", "e-both", "c-hw", "b-site", "a-other"]);
    expect(baseline.match).toEqual({ siteAndHardware: 2, hardware: 1, site: 1, other: 1 });
  });

  it("shares the baseline between the canary's strata in proportion, best match first in each", () => {
    const canary = [node("c1", "s1", "pi4"), node("c2", "s1", "pi4"), node("c3", "s2", "x86")];
    const candidates = [
      ...Array.from({ length: 20 }, (_, i) => node(`p${String(i).padStart(2, "0")}`, "s1", "pi4")),
      ...Array.from({ length: 20 }, (_, i) => node(`x${String(i).padStart(2, "0")}`, "s2", "x86")),
    ];
    const baseline = chooseBaseline({ canary, candidates });
    expect(baseline.nodeIds).toHaveLength(10);
    // 2 : 1 → 7 : 3 (largest remainder).
    expect(baseline.nodeIds.filter((id) => id.startsWith("p"))).toHaveLength(7);
    expect(baseline.nodeIds.filter((id) => id.startsWith("x"))).toHaveLength(3);
    expect(baseline.match.siteAndHardware).toBe(10);
  });

  it("is twice the canary, at least 10 and at most 500, never more than the candidates", () => {
    expect(baselineSize(1, 100)).toBe(10);
    expect(baselineSize(30, 100)).toBe(60);
    expect(baselineSize(400, 10_000)).toBe(500);
    expect(baselineSize(30, 7)).toBe(7);
  });

  const nodes = (prefix: string): fc.Arbitrary<CohortNode[]> =>
    fc.uniqueArray(
      fc.record({
        id: fc.integer({ min: 0, max: 300 }).map((n) => `${prefix}${n}`),
        siteId: fc.constantFrom("s1", "s2", "s3", null),
        labels: fc.constantFrom<Record<string, string>>({}, { hw: "pi4" }, { hw: "x86" }, { arch: "arm64" }),
      }),
      { selector: (n) => n.id, maxLength: 120 },
    );

  it("takes distinct candidates only, never a canary node, as many as baselineSize says, whatever the input order", () => {
    fc.assert(
      fc.property(nodes("c"), nodes("n"), fc.option(fc.string()), (canary, others, maybeSeed) => {
        const seed = maybeSeed ?? undefined;
        // Some candidates are canary nodes too (a caller's overlap): they must be left out.
        const candidates = [...others, ...canary.slice(0, 3)];
        const baseline = chooseBaseline({ canary, candidates, seed });
        const ids = new Set(baseline.nodeIds);
        expect(ids.size).toBe(baseline.nodeIds.length);
        for (const id of ids) expect(id.startsWith("n")).toBe(true);
        expect(baseline.nodeIds.length).toBe(baselineSize(canary.length, others.length));
        const { siteAndHardware, hardware, site, other } = baseline.match;
        expect(siteAndHardware + hardware + site + other).toBe(baseline.nodeIds.length);
        const again = chooseBaseline({
          canary: [...canary].reverse(),
          candidates: [...candidates].reverse(),
          seed,
        });
        expect(again).toEqual(baseline);
      }),
    );
  });

  it("with a seed, draws its own sample per seed, still best match first, not the lowest ids every time", () => {
    const canary = [node("c1", "s1", "pi4")];
    const candidates = [
      ...Array.from({ length: 200 }, (_, i) => node(`p${String(i).padStart(3, "0")}`, "s1", "pi4")),
      ...Array.from({ length: 50 }, (_, i) => node(`x${String(i).padStart(3, "0")}`, "s2", "x86")),
    ];
    const unseeded = chooseBaseline({ canary, candidates });
    expect(unseeded.nodeIds).toEqual(Array.from({ length: 10 }, (_, i) => `p${String(i).padStart(3, "0")}`));
    const samples = ["rollout-a:0", "rollout-a:1", "rollout-b:0"].map(
      (seed) => chooseBaseline({ canary, candidates, seed }).nodeIds,
    );
    for (const ids of samples) {
      expect(ids).toHaveLength(10);
      // Still the best tier only: 200 candidates of the canary's site and hardware.
      for (const id of ids) expect(id.startsWith("p")).toBe(true);
    }
    // Each seed its own sample: no two share more than a few nodes, and none is the lowest ids.
    const overlap = (a: string[], b: string[]) => a.filter((id) => b.includes(id)).length;
    expect(overlap(samples[0] ?? [], samples[1] ?? [])).toBeLessThan(5);
    expect(overlap(samples[0] ?? [], samples[2] ?? [])).toBeLessThan(5);
    expect(overlap(samples[0] ?? [], unseeded.nodeIds)).toBeLessThan(5);
    // Deterministic for a seed.
    expect(chooseBaseline({ canary, candidates, seed: "rollout-a:0" }).nodeIds).toEqual(samples[0]);
  });

  it("proportionalShares always sums to the total", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 20 }),
        fc.nat(500),
        (w, total) => {
          expect(proportionalShares(w, total).reduce((a, b) => a + b, 0)).toBe(total);
        },
      ),
    );
  });
});

describe("gate queries", () => {
  const cohort = { nodeIds: ["n1", "n2"], app: 'we"b', version: { is: "2.0" } } as const;

  it("reads a per-app preset of the cohort's nodes and version, one value per node", () => {
    const gate = gateSchema.parse({
      name: "cpu",
      metric: { preset: "app_cpu" },
      windowSeconds: 120,
      criterion: { kind: "compare" },
    });
    expect(gateQuery(gate, cohort)).toBe(
      'sum by (node) (avg_over_time(edgefleet_app_cpu_usage_ratio{node=~"n1|n2",app="we\\"b",version="2.0"}[120s]))',
    );
    expect(gateQuery(gate, { ...cohort, version: { isNot: "2.0" } })).toContain('version!="2.0"');
    expect(gateChartQuery(gate, cohort)).toMatch(/^avg\(sum by \(node\)/);
  });

  it("reads node presets without app labels, and operator PromQL with its window filled in", () => {
    const up = gateSchema.parse({
      name: "up",
      metric: { preset: "node_bytes_up" },
      criterion: { kind: "compare" },
    });
    expect(gateQuery(up, cohort)).toBe(
      'sum by (node) (increase(edgefleet_node_network_transmit_bytes_total{node=~"n1|n2"}[300s]))',
    );
    const custom = gateSchema.parse({
      name: "errors",
      metric: { promql: "sum by (node) (rate(http_errors_total[$window]))" },
      windowSeconds: 60,
      criterion: { kind: "threshold", max: 1 },
    });
    expect(gateQuery(custom, cohort)).toBe("sum by (node) (rate(http_errors_total[60s]))");
  });

  it("finds an org matcher naming another organization", () => {
    expect(foreignOrganizationMatcher('up{org="other"}', "mine")).toBe("other");
    expect(foreignOrganizationMatcher("up{org =~ 'o.*'}", "mine")).toBe("o.*");
    expect(foreignOrganizationMatcher('up{org="mine"}', "mine")).toBeNull();
    expect(foreignOrganizationMatcher('up{organ="x", node="y"}', "mine")).toBeNull();
  });
});
