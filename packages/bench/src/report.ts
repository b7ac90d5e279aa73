import { type BenchResults, TARGETS } from "./results.js";
import type { LatencySummary } from "./stats.js";

/** The markdown report of one run (docs/benchmarks/edge-data-path.md). */

const fixed = (value: number, digits = 1) => value.toFixed(digits);
const ms = (value: number) => (value >= 10_000 ? `${fixed(value / 1000)} s` : `${Math.round(value)} ms`);

function latencyRow(what: string, summary: LatencySummary | null): string {
  if (!summary) return `| ${what} | – | – | – | – | – |`;
  return `| ${what} | ${summary.count} | ${ms(summary.p50)} | ${ms(summary.p90)} | ${ms(summary.p99)} | ${ms(summary.max)} |`;
}

function p50p99(summary: LatencySummary | null): string {
  return summary ? `p50 ${ms(summary.p50)}, p99 ${ms(summary.p99)}` : "not measured";
}

/** A problem as one list item: multi-line errors (Prisma's quote code) keep their last line. */
function oneLine(problem: string): string {
  const lines = problem
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  if (lines.length <= 1) return problem.trim();
  return `${lines[0]} ${lines.at(-1)}`;
}

function verdict(ok: boolean): string {
  return ok ? "meets the target" : "**misses the target**";
}

export function renderReport(results: BenchResults, chartFiles: readonly string[]): string {
  const { config, machine } = results;
  const uplink = results.idleUplink;
  const storm = results.reconnectStorm;
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);
  const chart = (name: string, alt: string) => {
    const file = chartFiles.find((candidate) => candidate.endsWith(`-${name}.svg`));
    if (file) push(`![${alt}](${file})`, "");
  };

  push(
    "# Edge data path benchmark",
    "",
    `Written by \`${results.command}\` on ${machine.date.slice(0, 10)} (commit ${results.commit}). Do not edit by hand:`,
    "run the command again to refresh it.",
    "",
    `**${config.nodes.toLocaleString("en-US")} hollow agents** (real protocol and credentials, one NATS connection`,
    `each, simulated runtime) in ${config.hollowProcesses} processes, connected directly to the operator-mode hub`,
    `of the \`bench\` stack profile (PostgreSQL 15, nats-server ${results.natsVersion}, Mimir, the real gateway). The gateway`,
    `runs with its default edge intervals: heartbeat ${config.heartbeatSeconds} s, metrics ${config.metricsSeconds} s,`,
    `liveness flush ${config.livenessFlushMs} ms.`,
    "",
    "## Machine",
    "",
    "| | |",
    "|---|---|",
    `| CPU | ${machine.cpuModel}, ${machine.cores} cores (shared with other work) |`,
    `| memory | ${machine.memoryGiB} GiB |`,
    `| OS, kernel | ${machine.os}, Linux ${machine.kernel} |`,
    `| Node.js | ${machine.node} |`,
    `| date | ${machine.date} |`,
    "",
    "## Results",
    "",
    "| what | result | target |",
    "|---|---|---|",
    `| enrollment rate | ${fixed(results.enrollment.perSecond)} nodes/s (${results.enrollment.enrolled} in ${fixed(results.enrollment.seconds)} s${results.enrollment.failures ? `, ${results.enrollment.failures} failed` : ""}) | – |`,
    `| connect → online in Postgres | ${p50p99(results.latency.connectToOnline)} (agents started at up to ${config.connectPerSecond}/s${config.connectInFlight ? `, at most ${config.connectInFlight} handshakes in flight per process` : ""}${results.connectStartedPerSecond ? `: ${fixed(results.connectStartedPerSecond)}/s` : ""}; all online after ${fixed(results.allOnlineSeconds)} s) | – |`,
    `| heartbeat-to-visible: restart of an offline node → online | ${p50p99(results.latency.restartToOnline)} (${config.restartSample} nodes) | visible within 2 heartbeats (${2 * config.heartbeatSeconds} s) |`,
    `| agent gone → offline in Postgres | ${p50p99(results.latency.stopToOffline)} | ≤ ${ms(results.offlineBoundMs)} (3 heartbeats + slack, plus the sweep) |`,
    `| desired → running in Postgres | ${p50p99(results.latency.desiredToRunning)} (${results.rollout.nodes} nodes, all running after ${fixed(results.rollout.allRunningSeconds)} s) | – |`,
    storm
      ? `| reconnect storm: hub restarted with the fleet online → every agent resynced (Hello answered) | ${storm.convergedSeconds === null ? `**${storm.resynced} of ${storm.nodes}** within the timeout` : `${fixed(storm.convergedSeconds)} s for ${storm.nodes} nodes`}, ${storm.fullLists} full re-lists | ≤ 60 s, no full re-list: ${verdict(storm.convergedSeconds !== null && storm.convergedSeconds <= TARGETS.stormSeconds && storm.fullLists === 0)} |`
      : "| reconnect storm | not measured | ≤ 60 s, no full re-list |",
    uplink
      ? `| idle uplink per node (NATS server \`in_bytes\`) | ${fixed(uplink.bytesPerMinute)} B/min = ${fixed(uplink.kbitPerSecond, 4)} kbit/s | ≤ ${TARGETS.idleUplinkKbitPerSecond} kbit/s: ${verdict(uplink.kbitPerSecond <= TARGETS.idleUplinkKbitPerSecond)} |`
      : "| idle uplink per node | not measured | – |",
    ...results.referenceAgent.map(
      (agent) =>
        `| reference agent RSS (${agent.variant}, one idle app, process runtime) | ${fixed(agent.rssMiBLast)} MiB (max ${fixed(agent.rssMiBMax)}) | ≤ ${TARGETS.agentRssMiB} MB: ${verdict(agent.rssMiBLast <= TARGETS.agentRssMiB)} |`,
    ),
    results.hollowRssKiBPerNode === null
      ? "| hollow agent memory per simulated node | not measured | – |"
      : `| hollow agent memory per simulated node | ${fixed(results.hollowRssKiBPerNode)} KiB (idle worker RSS above the ${fixed(results.hollowBaselineMiB)} MiB the ${config.hollowProcesses} empty workers weigh, / nodes) | – |`,
    "",
  );
  chart("fleet-over-time", "Nodes enrolled and online over time");

  push(
    "### Latencies",
    "",
    "Each latency is measured per node from the moment the benchmark acted (agent started, desired state",
    "committed, agent stopped or restarted) to the row changing in Postgres; the change times come from a",
    "trigger (`clock_timestamp()`) the benchmark adds to its own database, so no polling interval is included.",
    "",
    "| latency | nodes | p50 | p90 | p99 | max |",
    "|---|---|---|---|---|---|",
    latencyRow("agent started → node online", results.latency.connectToOnline),
    latencyRow("offline agent restarted → node online", results.latency.restartToOnline),
    latencyRow("agent stopped → node offline", results.latency.stopToOffline),
    latencyRow("desired state committed → app running", results.latency.desiredToRunning),
    ...(storm ? [latencyRow("hub restarted → agent resynced (reconnect storm)", storm.resync)] : []),
    "",
    `The desired rollout called \`setDesiredApps\` for ${results.rollout.nodes} nodes${results.rollout.nodes < config.nodes ? ` (spread over the ${config.nodes} online)` : ""} in ${fixed(results.rollout.seconds)} s`,
    `(${fixed(results.rollout.setPerSecond)} calls/s, one Prisma transaction per node from the benchmark driver: that, not the edge`,
    "path, sets the pace); the hollow runtime takes 40–400 ms from pending to running by design.",
    "",
  );
  chart("latency", "Latency distributions");

  if (storm) {
    push(
      "### Reconnect storm",
      "",
      `With the fleet settled, the hub nats-server was stopped (SIGTERM: every connection closed at once) and`,
      `started again with the same data; it was back after ${ms(storm.serverDownMs)}. Each agent reconnects on its own`,
      "(jittered exponential backoff; the hollow workers also pace their own agents' dials, 50/s per process)",
      "and sends Hello with the revision it applied; a node counts as resynced when",
      "that Hello is answered. Re-lists are counted by the gateway (`desired_full_lists_total`: the whole desired",
      "state sent again to a node that had applied a revision; a first sync does not count).",
      "",
      "| | value |",
      "|---|---|",
      `| agents online at the restart | ${storm.nodes} |`,
      `| resynced | ${storm.resynced}${storm.convergedSeconds === null ? "" : ` (all, ${fixed(storm.convergedSeconds)} s after the server stopped)`} |`,
      `| per node, server stopped → resynced | ${p50p99(storm.resync)} |`,
      `| Hellos answered by the gateway | ${storm.hellos} |`,
      `| deltas sent in Hello replies | ${storm.helloDeltas} |`,
      `| full re-lists | ${storm.fullLists} |`,
      "",
    );
  }

  const measuredMemory = results.referenceAgent.filter((agent) => agent.anonymousMiB !== undefined);
  if (measuredMemory.length > 0) {
    push(
      "### Reference agent memory",
      "",
      "`edgefleet-agent run` (process runtime, one idle `sleep` app) against this stack. The bundle is what a node",
      "runs: one minified file started by its shebang as `node --lite-mode --no-expose-wasm --max-semi-space-size=1",
      "--single-threaded-gc --v8-pool-size=0`. Where its resident memory is, at the last sample",
      "(`/proc/<pid>/smaps_rollup`): file-backed pages are Node's own code (the binary, shared with every other",
      "Node process and reclaimable); anonymous pages are the heaps and stacks.",
      "",
      "| variant | RSS | anonymous | file-backed | PSS |",
      "|---|---|---|---|---|",
      ...measuredMemory.map(
        (agent) =>
          `| ${agent.variant} | ${fixed(agent.rssMiBLast)} MiB | ${fixed(agent.anonymousMiB ?? 0)} MiB | ${fixed(agent.fileBackedMiB ?? 0)} MiB | ${fixed(agent.pssMiB ?? 0)} MiB |`,
      ),
      ...(results.emptyNodeMemory
        ? [
            `| empty Node (\`node -e 'setInterval(() => {}, 1000)'\`, no flags) | ${fixed(results.emptyNodeMemory.rssMiB)} MiB | ${fixed(results.emptyNodeMemory.anonymousMiB)} MiB | ${fixed(results.emptyNodeMemory.fileBackedMiB)} MiB | – |`,
          ]
        : []),
      "",
      "An empty Node process is the floor under any Node agent: its file-backed part alone is most of the",
      "40 MB target, so a Node agent cannot meet it in RSS; what the agent adds is the anonymous memory above",
      "the empty process's. A node that needs 40 MB wants a native agent speaking the same protocol (the",
      "protocol vectors pin the bytes).",
      "",
    );
  }

  if (uplink) {
    push(
      "### Idle uplink",
      "",
      `Counted at the NATS server: \`in_bytes\` of the ${uplink.connections} agent connections (\`/connz\`) over an idle`,
      `window of ${uplink.windowSeconds} s after the fleet had settled. This is the NATS protocol stream as the server reads`,
      "it (PUB/HPUB lines with subject and headers, payloads, PINGs and PONGs); TCP/IP headers are not included.",
      "",
      "| per node | value |",
      "|---|---|",
      `| uplink | ${fixed(uplink.bytesPerMinute)} B/min, ${fixed(uplink.kbitPerSecond, 4)} kbit/s |`,
      `| messages up | ${fixed(uplink.msgsPerMinute, 2)} per minute |`,
      `| downlink (server \`out_bytes\`) | ${fixed(uplink.outBytesPerMinute)} B/min |`,
      "",
    );
  }

  push(
    "### Control plane CPU and memory",
    "",
    "From `/proc` every 2 s: CPU in percent of one core (mean and max of the samples in the phase), memory",
    "as the peak of the process tree's PSS (shared pages split among processes, so Postgres backends do not",
    "count the shared buffers many times) and RSS. Phases: `enroll`, `connect` (agents coming online),",
    "`rollout` (desired state to all nodes), `idle` (the uplink window), `storm` (the hub restarted with the fleet",
    "online), `restart` (the offline/online sample).",
    "",
    "| component | phase | CPU mean | CPU max | PSS peak | RSS peak |",
    "|---|---|---|---|---|---|",
    ...results.usage.map(
      (usage) =>
        `| ${usage.component} | ${usage.phase} | ${fixed(usage.cpuPercentMean)} % | ${fixed(usage.cpuPercentMax)} % | ${Math.round(usage.pssMiBMax)} MiB | ${Math.round(usage.rssMiBMax)} MiB |`,
    ),
    "",
  );
  chart("cpu", "CPU per component over time");
  chart("memory", "Peak memory per component");

  if (Object.keys(results.gatewayCounters).length > 0) {
    push(
      "### Gateway counters at the end",
      "",
      "| counter | value |",
      "|---|---|",
      ...Object.entries(results.gatewayCounters).map(([name, value]) => `| \`${name}\` | ${value} |`),
      "",
    );
  }

  push("## What did not hold", "");
  if (results.problems.length === 0) push("In this run, every phase completed for every node.", "");
  else push(...results.problems.map((problem) => `- ${oneLine(problem)}`), "");
  if (results.notes.length > 0) push(...results.notes.map((note) => `- ${note}`), "");

  push(
    "## How it runs",
    "",
    "`pnpm bench:edge [--nodes N] [--hollow-processes P] [--connect-rate R] [--connect-in-flight F] [--idle-seconds S] [--restart-sample K]`",
    "(packages/bench) starts the `bench` stack profile (its own ports and `var/bench/` data, beside dev and",
    "test), migrates a fresh database, starts the gateway, creates an organization and one enrollment token,",
    "and forks P worker processes, each enrolling and running its share of hollow agents. It measures in",
    "phases (enroll, connect, rollout, idle, reconnect storm, restart), measures the reference agent CLI (process runtime, one",
    "`sleep` app) against the same stack, writes this file and its charts, and stops everything it started,",
    "also on failure or Ctrl-C. Raw numbers: `var/bench/results.json`.",
    "",
  );
  return `${lines.join("\n").trimEnd()}\n`;
}
