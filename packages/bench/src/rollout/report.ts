import type { LatencySummary } from "../stats.js";
import { batchLabel } from "./charts.js";
import { ROLLOUT_TARGETS, type RolloutBenchResults, type RolloutRun } from "./results.js";

/** The markdown report of one `pnpm bench:rollout` run (docs/benchmarks/rollout.md). */

const fixed = (value: number, digits = 1) => value.toFixed(digits);
const ms = (value: number) => (value >= 10_000 ? `${fixed(value / 1000)} s` : `${Math.round(value)} ms`);
const seconds = (value: number | null) => (value === null ? "–" : `${fixed(value)} s`);
const mib = (bytes: number) => `${fixed(bytes / 1024 ** 2)} MiB`;
const verdict = (ok: boolean) => (ok ? "meets the target" : "**misses the target**");

function p50p99(summary: LatencySummary | null): string {
  return summary ? `p50 ${ms(summary.p50)}, p99 ${ms(summary.p99)}` : "not measured";
}

function batchTable(run: RolloutRun, push: (...lines: string[]) => void): void {
  push(
    "| batch | nodes | commit (step) | dispatched at | p50 | p90 | p99 | max | never ran | all running at |",
    "|---|---|---|---|---|---|---|---|---|---|",
  );
  for (const batch of run.batches) {
    const latency = batch.toRunning;
    push(
      `| ${batchLabel(batch.batch)} | ${batch.nodes} | ${ms(batch.commitMs)}${batch.steps > 1 ? ` (longest of ${batch.steps} steps)` : ""} | ${fixed(batch.dispatchedAtSeconds)} s | ${latency ? ms(latency.p50) : "–"} | ${latency ? ms(latency.p90) : "–"} | ${latency ? ms(latency.p99) : "–"} | ${latency ? ms(latency.max) : "–"} | ${batch.notRunning} | ${seconds(batch.allRunningSeconds)} |`,
    );
  }
  push("");
}

function oneLine(problem: string): string {
  const lines = problem
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  return lines.length <= 1 ? problem.trim() : `${lines[0]} ${lines.at(-1)}`;
}

export function renderRolloutReport(results: RolloutBenchResults, chartFiles: readonly string[]): string {
  const { config, machine } = results;
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);
  const chart = (name: string, alt: string) => {
    const file = chartFiles.find((candidate) => candidate.endsWith(`-${name}.svg`));
    if (file) push(`![${alt}](${file})`, "");
  };
  const killed = results.runs.find((run) => run.kill !== null);

  push(
    "# Rollout benchmark",
    "",
    `Written by \`${results.command}\` on ${machine.date.slice(0, 10)} (commit ${results.commit}). Do not edit by hand:`,
    "run the command again to refresh it. Raw numbers: [`rollout-results.json`](rollout-results.json).",
    "",
    `**${config.nodes.toLocaleString("en-US")} hollow agents** (real protocol and credentials, one NATS connection each,`,
    `simulated process runtime) in ${config.hollowProcesses} processes against the \`bench\` stack profile (PostgreSQL 15,`,
    `nats-server ${results.natsVersion}, Mimir, Keycloak, the real gateway with its rollout controller). Each run is a`,
    `rollout of a new version of one app to every node in **${config.batches} batches of 20 %**, its artifact a`,
    `**${mib(config.artifactBytes)} file uploaded** through the gateway into the organization's JetStream object store.`,
    `The hollow agents **really fetch it** as the real fetcher does: ${config.chunkBytes / 1024} KiB chunks, 4 in flight, over their own NATS`,
    "request/reply to the gateway, SHA-256 checked, progress reported at most every 2 s, then report the version",
    "running; only starting the process is simulated (20–200 ms per state change).",
    killed?.kill
      ? `The \`${killed.name}\` run \`kill -9\`s the gateway in the middle of batch ${killed.kill.batch + 1} and starts it again at once.`
      : "",
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
    `| enrollment | ${results.enrollment.enrolled} nodes at ${fixed(results.enrollment.perSecond)} nodes/s${results.enrollment.failures ? ` (${results.enrollment.failures} failed)` : ""}; all online after ${fixed(results.online.seconds)} s | – |`,
  );
  for (const run of results.runs) {
    const worstP99 = Math.max(
      ...run.batches.map((batch) => batch.toRunning?.p99 ?? Number.POSITIVE_INFINITY),
    );
    push(
      `| ${run.name}: dispatch committed → running, per node | ${p50p99(run.toRunning)}; worst batch p99 ${Number.isFinite(worstP99) ? ms(worstP99) : "–"} | p99 ≤ 5 s: ${verdict(worstP99 <= ROLLOUT_TARGETS.p99Ms)} |`,
      `| ${run.name}: whole rollout, start → completed | ${run.wallSeconds === null ? `**not completed** (status ${run.status})` : `${fixed(run.wallSeconds)} s`} | – |`,
      `| ${run.name}: controller (gateway) CPU | ${fixed(run.controllerCpuSeconds)} CPU-s, ${fixed(run.controllerCpuPercentMean)} % of a core on average | – |`,
      `| ${run.name}: bytes through the hub | in ${mib(run.hub.inBytes)}, out ${mib(run.hub.outBytes)}; to the agents ${mib(run.hub.toAgentsBytes)} for ${mib(run.hub.artifactBytes)} of artifact (${run.hub.artifactBytes > 0 ? fixed(run.hub.toAgentsBytes / run.hub.artifactBytes, 2) : "–"}×) | – |`,
      `| ${run.name}: nodes updated twice | ${run.updatedTwice.nodes} | 0: ${verdict(run.updatedTwice.nodes === ROLLOUT_TARGETS.updatedTwice)} |`,
      `| ${run.name}: machine load (1-min load average, start → end) | ${run.loadAverage ? `${fixed(run.loadAverage[0])} → ${fixed(run.loadAverage[1])}` : "not recorded"} on ${machine.cores} cores | – |`,
      run.status === "running"
        ? `| ${run.name}: nodes not yet on the version when the benchmark stopped (the rollout was still moving, so not "left behind") | ${run.leftBehind} of ${run.nodes} | – |`
        : `| ${run.name}: nodes left behind | ${run.leftBehind} of ${run.nodes} | 0: ${verdict(run.leftBehind === ROLLOUT_TARGETS.leftBehind)} |`,
    );
    if (run.kill)
      push(
        `| ${run.name}: time to resume (kill → the restarted controller holds the rollout again) | ${seconds(run.kill.resumeSeconds)} (gateway ready again after ${fixed(run.kill.gatewayReadySeconds)} s; lease ${fixed(run.kill.leaseMs / 1000)} s) | – |`,
      );
  }
  push("");
  chart("running-over-time", "Nodes running the new version over time");

  for (const run of results.runs) {
    push(`### ${run.name}: per batch`, "");
    batchTable(run, push);
  }
  push(
    "**commit (step)**: the controller step that dispatched the batch, one Postgres transaction (lock the",
    "rollout, load the fleet, decide, commit every node's desired version set-based, write the plan rows),",
    "from its start to its last write. **p50 … max**: per node, from that last write to the node's app",
    "instance reaching `running` on the version; both times come from triggers (`clock_timestamp()`) the",
    "benchmark adds to its own database, so no polling interval is included, and the path measured is",
    "the whole one: the gateway publishes the desired delta, the agent fetches every chunk through the hub,",
    'checks the hash, "starts" the version and reports, and the gateway stores the report.',
    "",
  );
  chart("batch-latency", "Per-batch dispatch → running latency");

  if (killed?.kill) {
    const kill = killed.kill;
    push(
      "### The controller killed mid-batch",
      "",
      `The gateway process group got SIGKILL ${fixed(kill.atSeconds)} s after the start, in batch ${kill.batch + 1} with`,
      `${kill.batchRunningAtKill} of its ${kill.batchNodes} nodes running the version; a new gateway was started at once.`,
      `It answered /readyz after ${fixed(kill.gatewayReadySeconds)} s; its controller waited for the dead replica's lease`,
      `(${fixed(kill.leaseMs / 1000)} s) to run out and held the rollout again ${seconds(kill.resumeSeconds)} after the kill`,
      `${kill.resumeEvent ? `(its first timeline event after the kill: \`${kill.resumeEvent}\`)` : "(no timeline event yet then: the batch was still moving)"}. Agents in the middle of a download`,
      "got no chunk answers meanwhile and retried with the real fetcher's backoff (full jitter, 0.5 s",
      "doubling to 30 s), which is why that batch's tail is longer.",
      "",
      "Updated twice is counted by three witnesses, any of which suffices: the controller's dispatch rows",
      `(a second dispatch time: ${killed.updatedTwice.byDispatch}), the desired-state commits (the desired version set`,
      `to it twice: ${killed.updatedTwice.byDesired}), and the agents' runtimes (told twice to switch to it:`,
      `${killed.updatedTwice.byAgent}). Left behind: nodes of the target not running the version once the rollout`,
      "completed (or at the timeout).",
      "",
    );
  }

  push(
    "### CPU and memory",
    "",
    "| component | phase | CPU mean | CPU max | PSS max |",
    "|---|---|---|---|---|",
  );
  for (const usage of results.usage.filter((entry) => results.runs.some((run) => run.name === entry.phase)))
    push(
      `| ${usage.component} | ${usage.phase} | ${fixed(usage.cpuPercentMean)} % | ${fixed(usage.cpuPercentMax)} % | ${Math.round(usage.pssMiBMax)} MiB |`,
    );
  push(
    "",
    "CPU in percent of one core (the machine has " +
      `${machine.cores}). The controller runs inside the gateway, which also answers every artifact chunk`,
    'and stores every status report, so "controller CPU" is the whole gateway\'s.',
    "",
  );
  chart("controller-cpu", "Gateway and hub CPU over the run");

  push(
    "## Method",
    "",
    `- Stack: \`bench\` profile without Keycloak (nobody signs in), wiped at the start; the gateway with its defaults except the rollout tick (${config.rolloutTickMs} ms) and`,
    `  lease (${config.leaseMs} ms) stated here. Enrollment and connection as in \`pnpm bench:edge\`.`,
    `- Strategy: four \`{ percent: 20 }\` steps and the implicit last batch, no pauses, success threshold 100 %,`,
    `  timeout ${config.timeoutSeconds} s per node, offline nodes skipped; no disruption budget, no windows.`,
    "- Artifact: random bytes, a new file per run, uploaded with `PUT /internal/orgs/{org}/artifacts` (what the",
    "  console's upload calls); the version is created as the API does (`artifactSource: upload`).",
    "- The rollout is created and started through `@edgefleet/rollout-store` (`insertRollout`, `actOnRollout`),",
    "  the functions the API's `rollout.create`/`rollout.start` call; the gateway's controller does the rest.",
    results.runs.length > 1
      ? `- The first run starts from nodes without the app; the next moves them from ${results.runs[0]?.versionLabel} to the next version.`
      : "- The run starts from nodes without the app.",
    "",
  );
  if (results.problems.length > 0) {
    push("## Problems in this run", "");
    for (const problem of results.problems) push(`- ${oneLine(problem)}`);
    push("");
  }
  if (results.notes.length > 0) {
    push("## Notes", "");
    for (const note of results.notes) push(`- ${note}`);
    push("");
  }
  return `${lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}
