/**
 * pnpm bench:ha [--nodes 60] [--steady-seconds 60] [--partition-minutes 10] [--kill-spacing-seconds 100]
 *               [--out docs/benchmarks] [--note "…"] [--keep] [--render-only]
 *
 * High availability, proven (issue 8 #14): the `ha` stack profile (3 NATS nodes, 2 gateways, 2
 * consoles, Postgres, Mimir, Keycloak), hollow agents behind two site leaves, a site cut off for
 * 10 minutes while a rollout runs and each server is killed -9 in turn. Writes
 * docs/benchmarks/ha-chaos.md, ha-chaos-results.json and charts. ~25 minutes; run it under
 * `flock /tmp/edgefleet-bench.lock`. Stops everything it started, also on failure and Ctrl-C.
 */
import { parseArgs } from "node:util";

class UsageError extends Error {}

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "60" },
    "steady-seconds": { type: "string", default: "60" },
    "partition-minutes": { type: "string", default: "10" },
    "kill-spacing-seconds": { type: "string", default: "100" },
    "metrics-interval-seconds": { type: "string", default: "10" },
    "status-refresh-seconds": { type: "string", default: "30" },
    out: { type: "string", default: "docs/benchmarks" },
    note: { type: "string", multiple: true, default: [] },
    keep: { type: "boolean", default: false },
    "render-only": { type: "boolean", default: false },
  },
});

function integer(name: string, min: number, max: number): number {
  const value = Number(values[name as keyof typeof values]);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  return value;
}

try {
  const options = {
    nodes: integer("nodes", 4, 2_000),
    steadySeconds: integer("steady-seconds", 10, 3_600),
    partitionSeconds: integer("partition-minutes", 1, 120) * 60,
    killSpacingSeconds: integer("kill-spacing-seconds", 20, 3_600),
    metricsIntervalS: integer("metrics-interval-seconds", 1, 3_600),
    statusRefreshS: integer("status-refresh-seconds", 5, 3_600),
  };
  if (options.killSpacingSeconds * 5 >= options.partitionSeconds)
    throw new UsageError(
      "five kills must fit in the partition: --kill-spacing-seconds × 5 < --partition-minutes × 60",
    );
  // The stack module reads the profile when it is imported: set it first.
  process.env.EDGEFLEET_BENCH_PROFILE = "ha";
  const { runHaBench } = await import("./run.js");
  await runHaBench({
    ...options,
    outDir: values.out ?? "docs/benchmarks",
    notes: values.note ?? [],
    keep: values.keep ?? false,
    renderOnly: values["render-only"] ?? false,
    command: ["pnpm bench:ha", ...process.argv.slice(2)].join(" "),
  });
} catch (error) {
  if (error instanceof UsageError) {
    process.stderr.write(`bench:ha: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `bench:ha failed: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
  );
  process.exit(1);
}
