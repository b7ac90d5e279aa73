/**
 * pnpm bench:nodeops [--nodes 1000] [--hollow-processes 2] [--concurrency 16] [--idle-seconds 60]
 *                    [--profile bench] [--out docs/benchmarks]
 *
 * The node operations benchmark (issue 13): hollow agents on the real stack of a profile (its
 * Postgres and NATS hub, the gateway started here), then
 * - command round trip: one `report` command per node through the gateway's internal API (what the
 *   console's API calls: HTTP → gateway → NATS → node → NATS → gateway → HTTP), `--concurrency`
 *   calls at once, p50/p99 over every node; and the same as bulk calls of 100 nodes;
 * - an idle log session: one node's app that writes nothing, tailed while the viewer polls every
 *   second for `--idle-seconds`; every message on that node's downlink and command uplink counted
 *   (platform credentials, on the hub), per minute.
 * Writes docs/benchmarks/nodeops.md, nodeops-results.json and a chart. Stops what it started.
 */
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "1000" },
    "hollow-processes": { type: "string", default: "2" },
    concurrency: { type: "string", default: "16" },
    "idle-seconds": { type: "string", default: "60" },
    profile: { type: "string", default: "bench" },
    out: { type: "string", default: "docs/benchmarks" },
    "render-only": { type: "boolean", default: false },
  },
});

// The stack module reads the profile when it is imported: set it first.
process.env.EDGEFLEET_BENCH_PROFILE = values.profile;
const { runNodeOpsBench } = await import("./run.js");
await runNodeOpsBench({
  nodes: Number(values.nodes),
  hollowProcesses: Number(values["hollow-processes"]),
  concurrency: Number(values.concurrency),
  idleSeconds: Number(values["idle-seconds"]),
  outDir: values.out,
  renderOnly: values["render-only"],
  command: ["pnpm bench:nodeops", ...process.argv.slice(2)].join(" "),
});
