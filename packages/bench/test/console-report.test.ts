import { describe, expect, it } from "vitest";
import { buildCases } from "../src/console/cases.js";
import { chartSpecs, renderSvg } from "../src/console/charts.js";
import { distribution, summarizeLatencies } from "../src/console/latency.js";
import { renderReport } from "../src/console/report.js";
import type { ConsoleBenchResults, PassResult } from "../src/console/results.js";

const cases = buildCases({
  nodeIds: ["00000000-0000-7000-8000-000000000001"],
  expectedTotal: 100_024,
  deep: { byName: "c1", regionByLastSeen: "c2", depth: 25_000 },
  restNodeDetail: false,
  now: () => 0,
});

/** Every case at `ms`, except `slow` cases at 1,500 ms. */
function pass(
  concurrency: number,
  ms: number,
  slow: string[] = [],
  errors: Record<string, number> = {},
): PassResult {
  return {
    name: concurrency === 1 ? "sequential" : "concurrent",
    concurrency,
    runs: cases.map((c) => {
      const samples = Array.from({ length: 100 }, () => (slow.includes(c.id) ? 1500 : ms));
      return {
        caseId: c.id,
        summary: summarizeLatencies(samples, errors[c.id] ?? 0),
        throughput: 1000 / ms,
        firstError: errors[c.id] ? "HTTP 500" : null,
        distribution: distribution(samples),
      };
    }),
  };
}

function results(overrides: Partial<ConsoleBenchResults> = {}): ConsoleBenchResults {
  return {
    command: "pnpm bench:console",
    commit: "abc1234",
    machine: {
      cpuModel: "Test CPU",
      cores: 2,
      memoryGiB: 24,
      kernel: "6.1",
      os: "Debian GNU/Linux 12",
      node: "v20.0.0",
      date: "2026-11-21T17:00:00.000Z",
    },
    config: {
      nodes: 100_000,
      appsPerNode: 10,
      sites: 200,
      secondOrganizationNodes: 10_000,
      requests: 100,
      concurrentRequests: 200,
      concurrency: 8,
      warmup: 10,
      deepDepth: 25_000,
    },
    seed: {
      organizations: [{ slug: "acme", id: "x", nodes: 100_000, appInstances: 1_000_000, sites: 200 }],
      seconds: { nodes: 10, appInstances: 60, vacuum: 2, total: 75 },
      tableSizes: [{ table: "node", rows: 110_000, totalMiB: 84 }],
    },
    setupSeconds: { stack: 120, build: null, seed: 80 },
    cases: cases.map(({ id, group, label, timing }) => ({ id, group, label, timing })),
    passes: [pass(1, 20), pass(8, 80)],
    loadAverage: { before: 1.5, after: 3.25 },
    lockWaitSeconds: 0,
    explains: [],
    baseline: null,
    problems: [],
    notes: [],
    ...overrides,
  };
}

describe("console benchmark report", () => {
  it("states the data set, the machine (shared) and every case against its target", () => {
    const report = renderReport(results(), { "tail-by-case": "console-api-tail-by-case.svg" });
    expect(report).toContain("# Benchmark: console and API at 100,000 nodes and 1,000,000 app instances");
    expect(report).toContain("every case met its target");
    expect(report).toContain("Test CPU, 2 cores, 24 GiB RAM");
    expect(report).toContain("**The machine is shared**");
    expect(report).toContain("load average\n1.50 before measuring, 3.25 after");
    expect(report).toContain(
      "| REST API | node list: selector site=plant-7,tier!=canary | 20 ms | 20 ms | 20 ms | 20 ms | 50.0 | p99 ≤ 1.00 s | met |",
    );
    expect(report).toContain(
      "| page | /fleet (TTFB) | 80 ms | 80 ms | 80 ms | 80 ms | 12.5 | p95 ≤ 500 ms | met |",
    );
    expect(report).toContain("![tail latency per case](console-api-tail-by-case.svg)");
    expect(report).not.toMatch(/\n{3,}/);
  });

  it("names the cases that missed, and errors are never 'met'", () => {
    const report = renderReport(
      results({ passes: [pass(1, 20, ["rest-counts"]), pass(8, 80, [], { "page-fleet": 2 })] }),
      {},
    );
    expect(report).toContain(
      "2 of 40 case × pass results missed their target: node counts by status (sequential), /fleet (8 in flight)",
    );
    expect(report).toMatch(/\| REST API \| node counts by status \| 1.50 s \|.*\| \*\*missed\*\* \|/);
    expect(report).toMatch(/\| page \| \/fleet \(TTFB\) \|.*\| \*\*2 errors\*\* \|/);
  });

  it("shows before and after as ratios, and the query plans", () => {
    const report = renderReport(
      results({
        baseline: { commit: "0ld0001", label: "before the index", passes: [pass(1, 100), pass(8, 400)] },
        explains: [
          {
            caseId: "rest-counts",
            why: "The slowest API case.",
            requests: 5,
            statements: [{ sql: "SELECT count(*) FROM node | x", callsPerRequest: 1, meanMs: 50, maxMs: 60 }],
            explained: { sql: "SELECT count(*) FROM node", plan: "Aggregate (actual time=1..2)" },
          },
        ],
      }),
      {},
    );
    expect(report).toContain("## Before and after (before the index)");
    expect(report).toContain(
      "| REST API | node counts by status | 100 ms | 20 ms | 5.0× | 100 ms (p99) | 20 ms (p99) |",
    );
    expect(report).toContain("| page | /fleet | 400 ms | 80 ms | 5.0× | 400 ms (p95) | 80 ms (p95) |");
    expect(report).toContain("| tRPC (console) | node.counts (fleet page) | 400 ms | 80 ms | 5.0× |");
    expect(report).toContain("### REST API: node counts by status");
    expect(report).toContain("`SELECT count(*) FROM node \\| x`");
    expect(report).toContain("Aggregate (actual time=1..2)");
  });

  it("reports tenant fairness: the victim's calls per scenario and what the aggressor got", () => {
    const victim = (ms: number) =>
      ["rest-list-first-page", "trpc-counts"].map((caseId) => ({
        caseId,
        summary: summarizeLatencies(Array.from({ length: 100 }, () => ms)),
        firstError: null,
      }));
    const aggressor = {
      requests: 9_000,
      ok: 3_000,
      limited: 6_000,
      limitedWithoutRetryAfter: 0,
      otherErrors: 0,
      firstOtherError: null,
      okPerSecond: 100,
      limitedPerSecond: 200,
      aggressorP50Ms: 150,
    };
    const report = renderReport(
      results({
        fairness: {
          victimIntervalMs: 50,
          scenarios: [
            {
              name: "quiet",
              label: "victim alone",
              burstConcurrency: 0,
              consoleEnv: {},
              victim: victim(10),
              aggressor: null,
            },
            {
              name: "burst-fair",
              label: "fair",
              burstConcurrency: 32,
              consoleEnv: {},
              victim: victim(40),
              aggressor,
            },
            {
              name: "burst-unlimited",
              label: "unlimited",
              burstConcurrency: 32,
              consoleEnv: {},
              victim: victim(1500),
              aggressor: { ...aggressor, limited: 0, limitedPerSecond: 0 },
            },
          ],
        },
      }),
      {},
    );
    expect(report).toContain("## Tenant fairness (issue 8 #15)");
    expect(report).toContain("with 32 calls in flight");
    expect(report).toContain(
      "| fair | REST API: node list: first page, by name | 40 ms | 40 ms | 40 ms | 40 ms | 0 | met |",
    );
    expect(report).toContain(
      "| unlimited | tRPC (console): node.counts (fleet page) | 1.50 s | 1.50 s | 1.50 s | 1.50 s | 0 | **missed** |",
    );
    expect(report).toContain("| fair | 9,000 | 100 | 150 ms | 200 (6,000) | 0 | 0 |");
    // Older results without the fairness scenarios render without the section.
    expect(renderReport(results(), {})).not.toContain("Tenant fairness");
  });

  it("draws a distribution chart per group and the tail chart as SVG", async () => {
    const specs = chartSpecs(results());
    expect(Object.keys(specs).sort()).toEqual([
      "distribution-pages",
      "distribution-rest",
      "distribution-trpc",
      "tail-by-case",
    ]);
    const svg = await renderSvg(specs["distribution-pages"] as NonNullable<(typeof specs)[string]>);
    expect(svg).toMatch(/^<svg/);
    expect(svg).toContain("/fleet");
  }, 60_000);
});
