/**
 * `pnpm --filter @edgefleet/gateway bench:metrics-path`: CPU time per MetricsReport of the
 * gateway's metrics path (metrics-batcher.ts), without NATS, Postgres or Mimir. Builds a batch of
 * realistic reports for one organization (default 2,000 nodes × 1 report: 6 host series,
 * 2 interfaces, 10 apps × 3 series, 5 control series = 45 series each) and times, per phase,
 * what the batcher does with it: InterfaceAllowance.admit, seriesOfReport, mergeSeries, and
 * MimirWriter.write with `fetch` stubbed (protobuf + snappy, no HTTP send). A second case has
 * 2 reports per node in the batch, where merging has work to do.
 *
 * CPU time is process.cpuUsage (user + system, so garbage collection is included), per report,
 * median (and min, max) over --reps repetitions after --warmup ones. The uncompressed request
 * body is hashed: the same inputs must give the same bytes to Mimir before and after a change.
 *
 * Results are kept under --label (e.g. "before", "after") in docs/benchmarks/metrics-path.json;
 * docs/benchmarks/metrics-path.md is written from all labels there.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { MetricsReport } from "@edgefleet/agent-sdk/protocol";
import { Registry } from "prom-client";
import { createEdgeMetrics } from "../../src/edge/edge-metrics.js";
import {
  type AppInstanceFacts,
  InterfaceAllowance,
  mergeSeries,
  type ReportSeries,
  seriesOfReport,
} from "../../src/edge/ingest/mimir-series.js";
import { MimirWriter } from "../../src/edge/ingest/mimir-writer.js";

const { values } = parseArgs({
  // `pnpm bench:metrics-path -- --label x` passes the `--` on.
  args: process.argv.slice(2).filter((arg) => arg !== "--"),
  options: {
    nodes: { type: "string", default: "2000" },
    reps: { type: "string", default: "15" },
    warmup: { type: "string", default: "5" },
    label: { type: "string", default: "current" },
    "no-write": { type: "boolean", default: false },
  },
});
// snappyjs as prometheus-remote-write has it, to read back what would be sent.
const requireFromLibrary = createRequire(createRequire(import.meta.url).resolve("prometheus-remote-write"));
const SnappyJS = requireFromLibrary("snappyjs") as { uncompress(input: Uint8Array): Uint8Array };
const NODES = Number(values.nodes);
const REPS = Number(values.reps);
const WARMUP = Number(values.warmup);
const REPO = join(dirname(fileURLToPath(import.meta.url)), "../../../..");
const JSON_PATH = join(REPO, "docs/benchmarks/metrics-path.json");
const MD_PATH = join(REPO, "docs/benchmarks/metrics-path.md");

const PHASES = ["admit", "seriesOfReport", "mergeSeries", "encode"] as const;
type Phase = (typeof PHASES)[number];

/** Deterministic inputs (mulberry32), so the request body can be compared across runs. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const uuid = (next: () => number) =>
  Array.from({ length: 32 }, () => Math.floor(next() * 16).toString(16))
    .join("")
    .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, "$1-$2-$3-$4-$5");

interface Node {
  id: string;
  apps: Map<string, AppInstanceFacts>;
}

const APPS = Array.from({ length: 10 }, (_, i) => `app-${i}`);
const AT = Date.UTC(2026, 0, 1);

function fleet(nodes: number): { organizationId: string; nodes: Node[] } {
  const next = random(1);
  const organizationId = uuid(next);
  return {
    organizationId,
    nodes: Array.from({ length: nodes }, () => ({
      id: uuid(next),
      // One app not yet reported (no version label), as right after a rollout starts.
      apps: new Map(
        APPS.map((app, i) => [
          app,
          { version: i === 9 ? null : `1.${i}.0`, restarts: Math.floor(next() * 3) },
        ]),
      ),
    })),
  };
}

function reportOf(next: () => number, seq: number): MetricsReport {
  const int = (max: number) => Math.floor(next() * max);
  return {
    v: 1,
    seq,
    at: AT + seq * 15_000,
    cpu: int(1001),
    mu: int(4e9),
    mt: 8e9,
    du: int(3e10),
    dt: 6.4e10,
    rtt: int(200_000),
    net: [
      { if: "eth0", rx: int(1e12), tx: int(1e12) },
      { if: "wlan0", rx: int(1e9), tx: int(1e9) },
    ],
    apps: APPS.map((app) => ({ app, cpu: int(1000), mem: int(5e8) })),
    ctl: {
      hb: [int(1e6) + 1, int(1e6) + 1],
      mx: [int(1e7) + 1, 0],
      st: [int(1e6) + 1, 0],
      delta: [0, int(1e6) + 1],
    },
  } as MetricsReport;
}

interface Case {
  name: string;
  reportsPerNode: number;
}
const CASES: Case[] = [
  { name: `${NODES} nodes × 1 report`, reportsPerNode: 1 },
  { name: `${NODES / 2} nodes × 2 reports`, reportsPerNode: 2 },
];

/** MimirWriter.write with fetch stubbed: what it would send, and a 204. */
let lastBody: Uint8Array | null = null;
globalThis.fetch = (async (_url: string | URL | Request, init?: RequestInit) => {
  lastBody = init?.body as Uint8Array;
  return new Response(null, { status: 204 });
}) as typeof fetch;

const cpuMicros = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

async function runOnce(
  one: Case,
  organizationId: string,
  nodes: Node[],
  writer: MimirWriter,
  rep: number,
): Promise<{ perReport: Record<Phase, number>; body: Uint8Array; series: number; samples: number }> {
  const next = random(1000 + rep);
  const batch = nodes.flatMap((node) =>
    Array.from({ length: one.reportsPerNode }, (_, k) => ({ node, report: reportOf(next, 2 * rep + k + 1) })),
  );
  const count = batch.length;
  const allowance = new InterfaceAllowance();

  let start = process.cpuUsage();
  const interfaces = batch.map((entry) =>
    allowance.admit(
      entry.node.id,
      entry.report.net.map((net) => net.if),
    ),
  );
  const admit = cpuMicros(start);

  start = process.cpuUsage();
  const perReport: ReportSeries[] = batch.map((entry, i) => ({
    nodeId: entry.node.id,
    series: seriesOfReport(organizationId, entry.node.id, entry.report, {
      apps: entry.node.apps,
      interfaces: interfaces[i] as Set<string>,
    }).series,
  }));
  const series = cpuMicros(start);

  start = process.cpuUsage();
  const merged = mergeSeries(perReport);
  const merge = cpuMicros(start);

  lastBody = null;
  start = process.cpuUsage();
  const result = await writer.write(organizationId, merged);
  const encode = cpuMicros(start);
  if (result.outcome !== "done" || !lastBody) throw new Error(`write failed: ${JSON.stringify(result)}`);

  return {
    perReport: {
      admit: admit / count,
      seriesOfReport: series / count,
      mergeSeries: merge / count,
      encode: encode / count,
    },
    body: lastBody,
    series: merged.length,
    samples: merged.reduce((sum, s) => sum + s.samples.length, 0),
  };
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const round = (x: number) => Math.round(x * 100) / 100;

interface CaseResult {
  case: string;
  reports: number;
  series: number;
  samples: number;
  bodyBytes: number;
  /** sha256 of the uncompressed protobuf of the last repetition (same inputs in every run). */
  bodySha256: string;
  /** µs of CPU per report: median, min, max over the repetitions, and every repetition. */
  microsPerReport: Record<Phase | "total", { median: number; min: number; max: number; runs: number[] }>;
}

async function measure(one: Case): Promise<CaseResult> {
  const { organizationId, nodes } = fleet(NODES / one.reportsPerNode);
  const writer = new MimirWriter("http://mimir.invalid:9009", createEdgeMetrics(new Registry()));
  const runs: Array<Record<Phase | "total", number>> = [];
  let last: Awaited<ReturnType<typeof runOnce>> | null = null;
  for (let rep = 0; rep < WARMUP + REPS; rep++) {
    last = await runOnce(one, organizationId, nodes, writer, rep);
    const { perReport } = last;
    const total = PHASES.reduce((sum, phase) => sum + perReport[phase], 0);
    if (rep >= WARMUP) runs.push({ ...perReport, total });
  }
  if (!last) throw new Error("no repetitions");
  const raw = SnappyJS.uncompress(last.body);
  const microsPerReport = Object.fromEntries(
    [...PHASES, "total" as const].map((phase) => {
      const xs = runs.map((run) => run[phase]);
      return [
        phase,
        {
          median: round(median(xs)),
          min: round(Math.min(...xs)),
          max: round(Math.max(...xs)),
          runs: xs.map(round),
        },
      ];
    }),
  ) as CaseResult["microsPerReport"];
  return {
    case: one.name,
    reports: NODES,
    series: last.series,
    samples: last.samples,
    bodyBytes: last.body.byteLength,
    bodySha256: createHash("sha256").update(raw).digest("hex"),
    microsPerReport,
  };
}

const machine = {
  cpuModel: cpus()[0]?.model.trim() ?? "unknown",
  cores: cpus().length,
  memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
  node: process.version,
};
console.log(`machine: ${machine.cpuModel}, ${machine.cores} cores, node ${machine.node}`);
const results: CaseResult[] = [];
for (const one of CASES) {
  const result = await measure(one);
  results.push(result);
  console.log(
    `${result.case}: ${result.series} series, ${result.samples} samples, ${result.bodyBytes} bytes (body sha256 ${result.bodySha256.slice(0, 12)})`,
  );
  for (const phase of [...PHASES, "total" as const]) {
    const m = result.microsPerReport[phase];
    console.log(
      `  ${phase.padEnd(15)} median ${m.median.toFixed(2).padStart(7)} µs/report  (min ${m.min}, max ${m.max})`,
    );
  }
}

const commit = (() => {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO, encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
})();
/** Whether the code measured differs from the commit (a change measured before it is committed). */
const uncommitted = (() => {
  try {
    const status = execFileSync(
      "git",
      ["status", "--porcelain", "--", "apps/gateway/src/edge/ingest", "apps/gateway/package.json"],
      {
        cwd: REPO,
        encoding: "utf8",
      },
    );
    return status.trim().length > 0;
  } catch {
    return false;
  }
})();
const run = {
  label: values.label,
  date: new Date().toISOString(),
  commit,
  uncommitted,
  machine,
  loadAverage: loadavg().map(round),
  reps: REPS,
  warmup: WARMUP,
  cases: results,
};
if (!values["no-write"]) {
  const previous = existsSync(JSON_PATH)
    ? (JSON.parse(readFileSync(JSON_PATH, "utf8")) as { runs: (typeof run)[] })
    : null;
  const runs = [...(previous?.runs ?? []).filter((one) => one.label !== run.label), run];
  writeFileSync(JSON_PATH, `${JSON.stringify({ runs }, null, 2)}\n`);
  writeFileSync(MD_PATH, markdown(runs));
  console.log(`wrote ${JSON_PATH} and ${MD_PATH}`);
}

function markdown(runs: (typeof run)[]): string {
  const lines = [
    "# Metrics path: CPU per MetricsReport in the gateway",
    "",
    "Written by `pnpm --filter @edgefleet/gateway bench:metrics-path -- --label <label>`",
    "(apps/gateway/test/bench/metrics-path-bench.ts); raw numbers, every repetition:",
    "[`metrics-path.json`](metrics-path.json).",
    "",
    "One organization's batch as MetricsBatcher handles it, without NATS, Postgres or Mimir: each",
    "report has 6 host series, 2 interfaces (2 series each), 10 desired apps (3 series each) and",
    "5 control series, 45 in all. Phases: `admit` (InterfaceAllowance), `seriesOfReport`,",
    "`mergeSeries`, `encode` (MimirWriter.write with `fetch` stubbed: protobuf + snappy, no HTTP",
    "send). CPU time (user + system, so garbage collection is in it) per report, median over the",
    "repetitions (min–max in brackets). `body sha256` is the hash of the uncompressed protobuf",
    "sent for the same inputs: equal hashes mean Mimir receives the same bytes.",
    "",
  ];
  for (const one of runs) {
    lines.push(
      `## ${one.label}`,
      "",
      `Commit \`${one.commit}\`${one.uncommitted ? " with uncommitted changes to apps/gateway/src/edge/ingest (measured before committing them)" : ""}, ${one.date.slice(0, 16).replace("T", " ")} UTC, ${one.machine.cpuModel}, ` +
        `${one.machine.cores} cores (shared with other work; load average ${one.loadAverage.join(", ")}), ` +
        `Node ${one.machine.node}; ${one.reps} repetitions after ${one.warmup} warm-up.`,
      "",
      `| case | ${[...PHASES, "total"].join(" | ")} | series | body bytes | body sha256 |`,
      `|---|${[...PHASES, "total"].map(() => "---:").join("|")}|---:|---:|---|`,
    );
    for (const c of one.cases) {
      const cells = [...PHASES, "total" as const].map((phase) => {
        const m = c.microsPerReport[phase];
        return `${m.median.toFixed(2)} µs (${m.min.toFixed(1)}–${m.max.toFixed(1)})`;
      });
      lines.push(
        `| ${c.case} | ${cells.join(" | ")} | ${c.series} | ${c.bodyBytes} | \`${c.bodySha256.slice(0, 12)}\` |`,
      );
    }
    lines.push("");
  }
  return `${lines.join("\n")}`;
}
