import { resolve } from "node:path";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { REPO_ROOT } from "../stack.js";

export class UsageError extends Error {}

function positiveInt(name: string, value: string | undefined, max: number, min = 1): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max)
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return number;
}

/** One generator process (Node or Go) holds at most this many agent connections (20,000 open files). */
const NODES_PER_WORKER_MAX = 15_000;
/** One leaf nats-server holds at most this many (its own open-file limit, SETUP-FACTS). */
const NODES_PER_LEAF_MAX = 19_000;

function generatorOf(value: string | undefined): "go" | "node" {
  if (value === "go" || value === "node") return value;
  throw new UsageError(`--generator must be go or node, got ${JSON.stringify(value)}`);
}

/** `--help`: the options with their defaults, printed and the run not started. */
export class HelpRequested extends Error {}

export function readScaleOptions(argv: string[]) {
  const known = {
    nodes: { type: "string", default: "100000" },
    sites: { type: "string", default: "50" },
    "apps-per-node": { type: "string", default: "10" },
    "hollow-processes": { type: "string" },
    // Who simulates the nodes: the native agent's hollow mode (go) or agent-sdk workers (node).
    generator: { type: "string", default: "go" },
    "connect-rate": { type: "string", default: "500" },
    "connect-in-flight": { type: "string", default: "64" },
    "enroll-concurrency": { type: "string", default: "16" },
    "idle-seconds": { type: "string", default: "180" },
    // The fleet's report and heartbeat intervals (the gateway's GATEWAY_METRICS_INTERVAL_S and
    // GATEWAY_HEARTBEAT_INTERVAL_S; their defaults): an idle node's messages, and with them most
    // of its cost, scale with 1 / metrics-seconds. Heartbeats are quiet while reports flow only
    // when heartbeat-seconds ≥ metrics-seconds.
    "metrics-seconds": { type: "string", default: "60" },
    "heartbeat-seconds": { type: "string" },
    "rollout-batches": { type: "string", default: "5" },
    // ClusterLoader2's chaos: 1 % of the nodes fail and return every 5 minutes.
    "churn-percent": { type: "string", default: "1" },
    "churn-period": { type: "string", default: "300" },
    "churn-cycles": { type: "string", default: "3" },
    // With --generator node: the native agent's hollow mode beside the Node fleet, what one
    // simulated node costs in each (with go, the fleet itself is that measurement).
    "go-sample": { type: "string", default: "1000" },
    "go-seconds": { type: "string", default: "60" },
    // The console benchmark's single-object API calls, for this long with the fleet idle and
    // through the churn phase (issue 16's API SLI); 0 skips them (and the console).
    "api-seconds": { type: "string", default: "60" },
    "api-requests": { type: "string", default: "20" },
    // A V8 CPU profile of the gateway over an idle window (where the idle CPU goes).
    "profile-seconds": { type: "string", default: "60" },
    "no-profile": { type: "boolean", default: false },
    // The whole run stops by itself after this (each phase also has its own bound).
    "max-minutes": { type: "string", default: "240" },
    out: { type: "string", default: "docs/benchmarks" },
    note: { type: "string", multiple: true, default: [] },
    "render-only": { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  } satisfies ParseArgsConfig["options"];
  const { values } = (() => {
    try {
      return parseArgs({ args: argv, options: known });
    } catch (error) {
      // An unknown or malformed option is the user's mistake: say which, and what there is.
      throw new UsageError(`${error instanceof Error ? error.message : String(error)}\n${usage(known)}`);
    }
  })();
  if (values.help) throw new HelpRequested(usage(known));
  const nodes = positiveInt("nodes", values.nodes, 100_000, 10);
  const metricsSeconds = positiveInt("metrics-seconds", values["metrics-seconds"], 3_600, 5);
  const sites = positiveInt("sites", values.sites, 100);
  if (nodes / sites > NODES_PER_LEAF_MAX)
    throw new UsageError(`--sites ${sites} puts over ${NODES_PER_LEAF_MAX} nodes on a leaf: use more sites`);
  const hollowProcesses = values["hollow-processes"]
    ? positiveInt("hollow-processes", values["hollow-processes"], 64)
    : Math.max(1, Math.ceil(nodes / 12_500));
  if (nodes / hollowProcesses > NODES_PER_WORKER_MAX)
    throw new UsageError(
      `--hollow-processes ${hollowProcesses} gives over ${NODES_PER_WORKER_MAX} connections per process: use more`,
    );
  return {
    generator: generatorOf(values.generator),
    nodes,
    sites,
    appsPerNode: positiveInt("apps-per-node", values["apps-per-node"], 20),
    hollowProcesses,
    connectPerSecond: positiveInt("connect-rate", values["connect-rate"], 100_000),
    connectInFlight: positiveInt("connect-in-flight", values["connect-in-flight"], 10_000),
    enrollConcurrency: positiveInt("enroll-concurrency", values["enroll-concurrency"], 1_000),
    idleSeconds: positiveInt("idle-seconds", values["idle-seconds"], 3_600, 10),
    metricsSeconds,
    heartbeatSeconds: values["heartbeat-seconds"]
      ? positiveInt("heartbeat-seconds", values["heartbeat-seconds"], 3_600, 5)
      : Math.max(60, metricsSeconds),
    rolloutBatches: positiveInt("rollout-batches", values["rollout-batches"], 20),
    churnPercent: positiveInt("churn-percent", values["churn-percent"], 50),
    churnPeriodSeconds: positiveInt("churn-period", values["churn-period"], 3_600, 30),
    churnCycles: positiveInt("churn-cycles", values["churn-cycles"], 100, 0),
    goSample: positiveInt("go-sample", values["go-sample"], 20_000, 0),
    goSeconds: positiveInt("go-seconds", values["go-seconds"], 3_600, 10),
    apiSeconds: positiveInt("api-seconds", values["api-seconds"], 3_600, 0),
    apiRequests: positiveInt("api-requests", values["api-requests"], 1_000),
    profileSeconds: values["no-profile"]
      ? 0
      : positiveInt("profile-seconds", values["profile-seconds"], 3_600, 10),
    maxMinutes: positiveInt("max-minutes", values["max-minutes"], 24 * 60),
    outDir: resolve(REPO_ROOT, values.out ?? "docs/benchmarks"),
    notes: values.note ?? [],
    renderOnly: values["render-only"] ?? false,
  };
}

export type ScaleOptions = ReturnType<typeof readScaleOptions>;

function usage(options: Record<string, { type: "string" | "boolean"; default?: unknown }>): string {
  const lines = Object.entries(options).map(([name, option]) => {
    const value = option.type === "string" ? " <value>" : "";
    const fallback =
      option.default === undefined || option.default === false
        ? ""
        : `  (default ${JSON.stringify(option.default)})`;
    return `  --${name}${value}${fallback}`;
  });
  return ["usage: pnpm bench:scale [options]", ...lines].join("\n");
}
