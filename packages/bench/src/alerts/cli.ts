/**
 * pnpm bench:alerts [--nodes 50] [--for-minutes 1] [--stagger-seconds 0] [--max-minutes 14]
 *                   [--profile bench] [--out docs/benchmarks]
 *
 * The alert latency benchmark (issue 12, "Measure"): hollow agents on the real stack of a profile
 * (Postgres, NATS hub, Mimir's ruler and Alertmanager; the gateway started here with its default
 * intervals), one `node_offline` policy and a webhook channel to a receiver on loopback that
 * checks the Standard Webhooks signature. Once every node is online and the rule is loaded, the
 * agents stop; for every node, agent stopped → its alert received, p50/p99/max, what that adds on
 * top of the policy's `for` and the liveness bound, and where the time goes. Everything is bounded
 * by `--max-minutes`. Writes docs/benchmarks/alerts.md, alerts-results.json and a chart. Stops
 * what it started.
 */
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "50" },
    "for-minutes": { type: "string", default: "1" },
    "stagger-seconds": { type: "string", default: "0" },
    "max-minutes": { type: "string", default: "14" },
    profile: { type: "string", default: "bench" },
    out: { type: "string", default: "docs/benchmarks" },
    "render-only": { type: "boolean", default: false },
  },
});

const number = (name: keyof typeof values, min: number, max: number) => {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`--${name} must be an integer within ${min}..${max}, got ${values[name]}`);
  return value;
};

// The stack module reads the profile when it is imported: set it first.
process.env.EDGEFLEET_BENCH_PROFILE = values.profile;
const { runAlertsBench } = await import("./run.js");
await runAlertsBench({
  nodes: number("nodes", 1, 5_000),
  forMinutes: number("for-minutes", 0, 60),
  staggerSeconds: number("stagger-seconds", 0, 600),
  maxMinutes: number("max-minutes", 1, 120),
  outDir: values.out,
  renderOnly: values["render-only"],
  command: ["pnpm bench:alerts", ...process.argv.slice(2)].join(" "),
});
