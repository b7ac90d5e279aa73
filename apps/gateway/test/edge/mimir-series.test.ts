import type { MetricsReport } from "@edgefleet/agent-sdk/protocol";
import fc from "fast-check";
import { serialize } from "prometheus-remote-write";
import SnappyJS from "snappyjs";
import { describe, expect, it } from "vitest";
import {
  type AppInstanceFacts,
  mergeSeries,
  type ReportSeries,
  type Series,
  seriesOfReport,
} from "../../src/edge/ingest/mimir-series.js";
import { encodeWriteRequest } from "../../src/edge/ingest/mimir-writer.js";

/** mergeSeries as it was: one key per series from its sorted labels, every sample, then a sort. */
function referenceMerge(all: Series[]): Series[] {
  const byKey = new Map<string, Series>();
  for (const one of all) {
    const key = JSON.stringify(Object.entries(one.labels).sort(([a], [b]) => a.localeCompare(b)));
    const existing = byKey.get(key);
    if (existing) existing.samples.push(...one.samples);
    else byKey.set(key, { labels: one.labels, samples: [...one.samples] });
  }
  for (const one of byKey.values()) one.samples.sort((a, b) => a.timestamp - b.timestamp);
  return [...byKey.values()];
}

/** The body prometheus-remote-write's pushTimeseries sent for these series, before snappy. */
async function referenceBody(series: Series[]): Promise<Uint8Array> {
  const payload = {
    timeseries: series.map((t) => ({
      labels: Object.entries({ ...t.labels }).map(([name, value]) => ({ name, value })),
      samples: t.samples.map((s) => ({ value: s.value, timestamp: s.timestamp ? s.timestamp : Date.now() })),
    })),
  };
  // Typed as taking one series; it takes the WriteRequest (index.js).
  return new Uint8Array(await serialize(payload as never));
}

/** As comparable values: label order and sample order included. */
const ordered = (series: Series[]) =>
  series.map((one) => ({ labels: Object.entries(one.labels), samples: one.samples }));

const NODES = ["node-a", "node-b", "node-c"];
// "cache" at version "7" and "cache7" without one: labels that a key of values alone would confuse.
const APPS = ["web", "db", "cache", "cache7"];
const IFACES = ["eth0", "wlan0"];

const reportArb = fc.record({
  node: fc.constantFrom(...NODES),
  // Few timestamps, so that reports of one node tie or come out of order.
  at: fc.integer({ min: 1, max: 4 }).map((k) => 1_767_225_600_000 + k * 15_000),
  cpu: fc.integer({ min: 0, max: 1000 }),
  rtt: fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: undefined }),
  // Names may repeat within a report (a node's mistake): seriesOfReport takes each once.
  net: fc.array(fc.record({ if: fc.constantFrom(...IFACES, "tun9"), rx: fc.nat(), tx: fc.nat() }), {
    maxLength: 4,
  }),
  apps: fc.array(fc.record({ app: fc.constantFrom(...APPS, "other"), cpu: fc.nat(), mem: fc.nat() }), {
    maxLength: 5,
  }),
  ctl: fc.dictionary(fc.constantFrom("hb", "mx", "st", "ack"), fc.tuple(fc.nat(3), fc.nat(3)), {
    maxKeys: 3,
  }),
});

type ReportInput = typeof reportArb extends fc.Arbitrary<infer T> ? T : never;

const APP_FACTS: ReadonlyMap<string, AppInstanceFacts> = new Map([
  ["web", { version: "1.2.0", restarts: 1 }],
  ["db", { version: null, restarts: 0 }],
  ["cache", { version: "7", restarts: 3 }],
  ["cache7", { version: null, restarts: 3 }],
]);

function seriesOf(report: ReportInput, seq: number): Series[] {
  const message = {
    v: 1,
    seq,
    at: report.at,
    cpu: report.cpu,
    mu: 1,
    mt: 2,
    du: 3,
    dt: 4,
    ...(report.rtt === undefined ? {} : { rtt: report.rtt }),
    net: report.net,
    apps: report.apps,
    ctl: report.ctl,
  } as MetricsReport;
  return seriesOfReport("org-1", report.node, message, { apps: APP_FACTS, interfaces: new Set(IFACES) })
    .series;
}

describe("mergeSeries", () => {
  it("gives what merging every series by its labels gave, in the same order", () => {
    fc.assert(
      fc.property(fc.array(reportArb, { maxLength: 8 }), (reports) => {
        const perReport: ReportSeries[] = reports.map((report, i) => ({
          nodeId: report.node,
          series: seriesOf(report, i + 1),
        }));
        const expected = referenceMerge(reports.flatMap((report, i) => seriesOf(report, i + 1)));
        const merged = mergeSeries(perReport);
        expect(ordered(merged)).toEqual(ordered(expected));
        for (const one of merged) {
          const times = one.samples.map((sample) => sample.timestamp);
          expect(times).toEqual([...times].sort((a, b) => a - b));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("leaves its input as it is", () => {
    const one = (at: number): Series => ({
      labels: { __name__: "m", node: "n" },
      samples: [{ value: at, timestamp: at }],
    });
    const reports = [
      { nodeId: "n", series: [one(2)] },
      { nodeId: "n", series: [one(1)] },
    ];
    expect(mergeSeries(reports)).toEqual([
      {
        labels: { __name__: "m", node: "n" },
        samples: [
          { value: 1, timestamp: 1 },
          { value: 2, timestamp: 2 },
        ],
      },
    ]);
    expect(reports.map((report) => report.series[0]?.samples)).toEqual([
      [{ value: 2, timestamp: 2 }],
      [{ value: 1, timestamp: 1 }],
    ]);
  });
});

describe("seriesOfReport", () => {
  it("takes an interface or app a node names twice in one report once, the first time, and counts the rest as repeated", () => {
    const report = {
      node: "node-a",
      at: 1_767_225_600_000,
      cpu: 1,
      rtt: undefined,
      net: [
        { if: "eth0", rx: 1, tx: 2 },
        { if: "eth0", rx: 3, tx: 4 },
      ],
      apps: [
        { app: "web", cpu: 1, mem: 2 },
        { app: "web", cpu: 3, mem: 4 },
      ],
      ctl: {},
    };
    const series = seriesOf(report, 1);
    const keys = series.map((one) => JSON.stringify(one.labels));
    expect(new Set(keys).size).toBe(keys.length);
    const values = (name: string) =>
      series.filter((one) => one.labels.__name__ === name).flatMap((one) => one.samples.map((x) => x.value));
    expect(values("edgefleet_node_network_receive_bytes_total")).toEqual([1]);
    expect(values("edgefleet_app_memory_bytes")).toEqual([2]);
    const message = { v: 1, seq: 1, mu: 1, mt: 2, du: 3, dt: 4, ...report } as unknown as MetricsReport;
    const { dropped } = seriesOfReport("org-1", "node-a", message, {
      apps: APP_FACTS,
      interfaces: new Set(IFACES),
    });
    expect(dropped).toEqual({ apps: 0, interfaces: 0, repeated: 2 });
    // A repeat of a name outside the budget is a repeat too, not a second budget miss.
    const { dropped: outside } = seriesOfReport(
      "org-1",
      "node-a",
      {
        ...message,
        apps: [
          { app: "made-up", cpu: 1, mem: 2 },
          { app: "made-up", cpu: 1, mem: 2 },
        ],
      },
      { apps: APP_FACTS, interfaces: new Set() },
    );
    expect(outside).toEqual({ apps: 1, interfaces: 1, repeated: 2 });
  });

  it("stamps a report at 0 (a node without a clock) now, as the samples were sent before", () => {
    const before = Date.now();
    const series = seriesOf({ node: "node-a", at: 0, cpu: 1, rtt: undefined, net: [], apps: [], ctl: {} }, 1);
    for (const one of series) expect(one.samples[0]?.timestamp).toBeGreaterThanOrEqual(before);
  });
});

describe("encodeWriteRequest", () => {
  it("sends Mimir the bytes prometheus-remote-write sent for the batch before", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(reportArb, { maxLength: 8 }), async (reports) => {
        const perReport = reports.map((report, i) => ({
          nodeId: report.node,
          series: seriesOf(report, i + 1),
        }));
        const before = await referenceBody(referenceMerge(perReport.flatMap((report) => report.series)));
        const body = SnappyJS.uncompress(encodeWriteRequest(mergeSeries(perReport)));
        expect(Buffer.from(body).equals(Buffer.from(before))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("is one WriteRequest however many chunks it is encoded in", async () => {
    const series: Series[] = Array.from({ length: 1000 }, (_, i) => ({
      labels: { __name__: "edgefleet_node_cpu_usage_ratio", org: "o", node: `n${i}`, app: "wé b" },
      samples: [
        { value: i / 7, timestamp: 1_767_225_600_000 + i },
        { value: -i, timestamp: 1_767_225_600_001 + i },
      ],
    }));
    const body = SnappyJS.uncompress(encodeWriteRequest(series));
    expect(Buffer.from(body).equals(Buffer.from(await referenceBody(series)))).toBe(true);
  });
});
