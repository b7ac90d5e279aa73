/**
 * pnpm bench:rollout --scenario gates [--nodes 2000] [--good-runs 20] [--window-seconds 30]
 *   [--metrics-interval-seconds 5] [--canary-percent 1] [--second-percent 20] [--hollow-processes N]
 *   [--settle-seconds 10] [--catch-up-seconds 240] [--max-minutes 150] [--profile bench] [--out docs/benchmarks] [--note …]
 * pnpm bench:rollout --scenario gates --render-only [--note …]
 *
 * Metric gates (issue 11, Measure (a)): a good version and three bad ones (CPU hog, memory leak,
 * crash loop) rolled out to one hollow fleet with the console's gate presets, judged by the
 * gateway's controller on Mimir; the false-positive rate over the good runs. Writes
 * docs/benchmarks/rollout-gates.md with charts and rollout-gates-results.json.
 */
import { parseArgs } from "node:util";

function withoutNotes(argv: string[]): string[] {
  return argv.filter((arg, i) => arg !== "--note" && argv[i - 1] !== "--note" && !arg.startsWith("--note="));
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      nodes: { type: "string", default: "2000" },
      "good-runs": { type: "string", default: "20" },
      "window-seconds": { type: "string", default: "30" },
      "metrics-interval-seconds": { type: "string", default: "5" },
      "canary-percent": { type: "string", default: "1" },
      "second-percent": { type: "string", default: "20" },
      "hollow-processes": { type: "string" },
      "settle-seconds": { type: "string", default: "10" },
      "catch-up-seconds": { type: "string", default: "240" },
      "max-minutes": { type: "string", default: "150" },
      profile: { type: "string", default: process.env.EDGEFLEET_BENCH_PROFILE ?? "bench" },
      out: { type: "string", default: "docs/benchmarks" },
      note: { type: "string", multiple: true, default: [] },
      "render-only": { type: "boolean", default: false },
    },
  });
  const number = (name: keyof typeof values, min: number, max: number) => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min || value > max)
      throw new RangeError(
        `--${name} must be a number from ${min} to ${max}, got ${JSON.stringify(values[name])}`,
      );
    return value;
  };
  const nodes = Math.round(number("nodes", 20, 19_000));
  const options = {
    nodes,
    goodRuns: Math.round(number("good-runs", 0, 1_000)),
    windowSeconds: Math.round(number("window-seconds", 10, 3_600)),
    metricsIntervalSeconds: Math.round(number("metrics-interval-seconds", 1, 60)),
    canaryPercent: number("canary-percent", 0.01, 50),
    secondPercent: number("second-percent", 0.01, 90),
    hollowProcesses:
      values["hollow-processes"] === undefined
        ? Math.max(1, Math.ceil(nodes / 1_000))
        : Math.round(number("hollow-processes", 1, 64)),
    settleSeconds: number("settle-seconds", 0, 600),
    catchUpSeconds: number("catch-up-seconds", 0, 3_600),
    maxMinutes: number("max-minutes", 1, 10_000),
    outDir: values.out ?? "docs/benchmarks",
    notes: values.note ?? [],
    renderOnly: values["render-only"] ?? false,
    // Notes are listed in the report; the command line shows what was measured.
    command: ["pnpm bench:rollout --scenario gates", ...withoutNotes(argv)].join(" "),
  };
  // The stack module reads the profile when it is imported: set it first.
  process.env.EDGEFLEET_BENCH_PROFILE = values.profile;
  const { runGatesBench } = await import("./run.js");
  await runGatesBench(options);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(
    `bench:rollout --scenario gates failed: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
  );
  process.exit(
    error instanceof RangeError || (error as { code?: string })?.code?.startsWith("ERR_PARSE_ARGS") ? 2 : 1,
  );
});
