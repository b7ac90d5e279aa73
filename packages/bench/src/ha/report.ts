import type { DeliveryAccount } from "./accounting.js";
import type { HaBenchResults, KillRecord } from "./results.js";

/** The markdown report of one `pnpm bench:ha` run (docs/benchmarks/ha-chaos.md). */

const seconds = (value: number | null) => (value === null ? "**not recovered**" : `${value.toFixed(1)} s`);
const count = (value: number) => value.toLocaleString("en-US");

function deliveryRow(name: string, account: DeliveryAccount): string {
  const { status, metrics } = account;
  return `| ${name} | ${account.nodes} | ${count(status.acked)} | ${count(status.applied)} | ${count(status.superseded)} | **${status.lost}** | **${status.appliedTwice}** | ${count(metrics.acked)} | ${count(metrics.inMimir)} | **${metrics.lost}** | **${metrics.duplicated}** | ${metrics.unacked} | ${account.evicted} |`;
}

function seenText(kill: KillRecord): string {
  const parts = Object.entries(kill.seen).map(
    ([probe, kinds]) =>
      `${probe}: ${Object.entries(kinds)
        .map(([kind, times]) => `${kind} ×${times}`)
        .join(", ")}`,
  );
  return parts.length === 0 ? "nothing failed" : parts.join("; ");
}

export function renderHaReport(results: HaBenchResults, chartFiles: readonly string[]): string {
  const { config, machine } = results;
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);
  const chart = (name: string, alt: string) => {
    const file = chartFiles.find((candidate) => candidate.endsWith(`-${name}.svg`));
    if (file) push(`![${alt}](${file})`, "");
  };
  const total = results.deliveries.total;
  const lost = total.status.lost + total.metrics.lost;
  const doubled = total.status.appliedTwice + total.metrics.duplicated + results.rollout.updatedTwice.nodes;
  const wall =
    (results.kills.length > 0 ? results.partition.restoredAt : results.startedAt) - results.startedAt;

  push(
    "# High availability and chaos (issue 8, #14)",
    "",
    `Written by \`${results.command}\` on ${machine.date.slice(0, 10)} (commit ${results.commit}). Do not edit by hand:`,
    "run the command again to refresh it (`--render-only` re-renders from the JSON). Raw numbers:",
    "[`ha-chaos-results.json`](ha-chaos-results.json). The shape and what it protects: [docs/ha.md](../ha.md).",
    "",
    `**The \`ha\` stack profile:** a ${config.natsNodes}-node NATS cluster (operator mode, JetStream with EF_UP and the`,
    `artifact store replicated on every node, R${Math.min(3, config.natsNodes)}), ${config.gateways} gateways, ${config.consoles} consoles (production`,
    "builds), PostgreSQL, Mimir and Keycloak, all real processes on one machine. " +
      `**${config.nodes} hollow agents** (real protocol and credentials, simulated runtime, artifacts really fetched)`,
    `behind two site leaf nodes made from the console's leaf bundle (${config.sites.join(", ")}), metrics every`,
    `${config.metricsIntervalS} s and a status report at least every ${config.statusRefreshS} s per node.`,
    "",
    `**The scenario:** steady reporting; then site ${results.partition.site}'s link to the hub is cut for`,
    `${(config.partitionSeconds / 60).toFixed(0)} minutes while a rollout moves through site ${config.sites[0]} in small batches`,
    `(site ${results.partition.site}'s nodes last, the batch waiting for them); every ${config.killSpacingSeconds} s one server is`,
    "killed with SIGKILL (its whole process tree) and started again at once, as a supervisor would: " +
      results.kills.map((kill) => kill.what).join(", then ") +
      ". Then the link returns, the rollout completes, the agents stop and everything acknowledged is counted.",
    "",
    `Machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.os}, Node ${machine.node},`,
    `nats-server ${results.natsVersion}; **load average ${results.loadAverage[0].toFixed(1)} at the start, ${results.loadAverage[1].toFixed(1)} at the end**`,
    "(the machine is shared; times to recover stretch with load, counts do not).",
    "",
    "## The figures",
    "",
    `**Messages lost: ${lost}. Applied or stored twice: ${doubled}.** Over ${(wall / 60_000).toFixed(1)} minutes of chaos:`,
    "",
    "| | lost | duplicated | time to recover |",
    "|---|---|---|---|",
  );
  for (const kill of results.kills) {
    const account = kill.deliveries;
    push(
      account
        ? `| kill -9 ${kill.what} | ${account.status.lost} of ${count(account.status.acked)} status, ${account.metrics.lost} of ${count(account.metrics.acked)} metrics | ${account.status.appliedTwice} status, ${account.metrics.duplicated} metrics | ${seconds(kill.recovery.overall)} |`
        : `| kill -9 ${kill.what} | – | – | ${seconds(kill.recovery.overall)} |`,
    );
  }
  push(
    `| site ${results.partition.site} cut off ${(config.partitionSeconds / 60).toFixed(0)} min | ${results.deliveries.perSite[results.partition.site]?.status.lost ?? 0} status, ${results.deliveries.perSite[results.partition.site]?.metrics.lost ?? 0} metrics | ${results.deliveries.perSite[results.partition.site]?.status.appliedTwice ?? 0} status, ${results.deliveries.perSite[results.partition.site]?.metrics.duplicated ?? 0} metrics | ${results.partition.backlogAtRestore} buffered reports delivered ${seconds(results.partition.drainedSeconds)} after the link returned |`,
    `| the rollout (${results.rollout.nodes} nodes) | ${results.rollout.leftBehind} nodes left behind | ${results.rollout.updatedTwice.nodes} nodes updated twice | ${results.rollout.status}${results.rollout.finishedAt ? ` ${((results.rollout.finishedAt - results.rollout.startedAt) / 1000).toFixed(0)} s after its start` : ""} |`,
    "",
    "A kill's row counts the acknowledged reports made from 10 s before it until the next fault (by the",
    "reports' own time); the table below counts every acknowledged report of the run, whichever fault it met.",
    "",
    "### Every acknowledged report, exactly once",
    "",
    "| site | nodes | status acked | applied once | superseded | lost | applied twice | metrics acked | in Mimir | lost | duplicated | in Mimir, not acked | evicted at the edge |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  );
  for (const [site, account] of Object.entries(results.deliveries.perSite)) push(deliveryRow(site, account));
  push(deliveryRow("**total**", total), "");
  push(
    "- **status acked / metrics acked**: reports whose JetStream PubAck the agent got (the agent then drops them",
    "  from its outbox: the moment the platform took responsibility). Recorded by a wrapper around each hollow",
    "  agent's outbox (`packages/bench/src/delivery-ledger.ts`).",
    "- **applied once**: the inventory advanced the node's `status_seq` to that report's sequence exactly once (a",
    "  trigger on `node` in the benchmark's database records every advance). **superseded**: not applied because a",
    "  newer report of the same node was applied first (a status report is the node's whole state, so the older",
    "  one carries nothing the newer lacks; the ingest drops it by design). **lost**: neither.",
    "- **in Mimir**: a CPU sample exists at the report's own timestamp (a range query over the run returns every raw",
    "  sample; `count_over_time` per node equals the samples counted). **duplicated**: more samples than distinct",
    "  timestamps. **in Mimir, not acked**: stored although the agent never got its PubAck (it stopped first).",
    "- **evicted at the edge**: reports an agent's bounded outbox (256 KiB for hollow agents) dropped while cut off.",
    "",
  );
  if (total.examples.length > 0)
    push(`Nodes with something lost or doubled: ${total.examples.join(", ")}.`, "");

  push(
    "### Time to recover, per kill",
    "",
    "Seconds from the kill until each signal was healthy for good (the first healthy second after the last",
    "unhealthy one, before the next fault); **overall** is the slowest.",
    "",
    "| kill -9 | rollout batch | server ready | gateways ready | agents delivering | ingest caught up | console API | node commands | signed-in console | sign-in (Keycloak) | rollout controller | **overall** |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  );
  for (const kill of results.kills) {
    const r = kill.recovery;
    push(
      `| ${kill.what} | ${kill.rolloutBatchesAtKill ?? "–"} | ${seconds(r.serverReady)} | ${seconds(r.gatewaysReady)} | ${seconds(r.agentsDelivering)} | ${seconds(r.ingestCaughtUp)} | ${seconds(r.consoleApi)} | ${seconds(r.nodeCommands)} | ${seconds(r.session)} | ${seconds(r.signIn)} | ${r.controller === null ? "–" : seconds(r.controller)} | **${seconds(r.overall)}** |`,
    );
  }
  push("", "### What users saw meanwhile", "");
  for (const kill of results.kills) {
    push(`- **kill -9 ${kill.what}**: ${seenText(kill)}.`);
    for (const observation of kill.observations)
      push(
        `  - +${((observation.at - kill.at) / 1000).toFixed(0)} s ${observation.probe}: ${observation.status === null ? "no answer" : `HTTP ${observation.status}`} \`${observation.detail.replaceAll("`", "'").slice(0, 160)}\``,
      );
  }
  push("");
  chart(
    "timeline",
    "Reports waiting at the agents and in EF_UP over the run, kills and the partition marked",
  );
  chart("availability", "Per probe and second: ok, 5xx, no answer");
  chart("rollout", "Nodes running the new version over the rollout");
  chart("recovery", "Seconds to recover after each kill, by signal");
  push(
    "## How it is measured",
    "",
    "- Probes every second, each bounded to 2 s: both gateways' `/readyz`; both consoles' REST API",
    "  (`GET /api/v1/nodes/counts` with an operator API key); every 5 s a forced report on a node through each",
    "  console (`POST /api/v1/nodes/{id}/commands`: console → a gateway → NATS → the node and back; a console",
    "  skips a gateway replica it cannot reach); console 1 with alice's session cookie",
    "  (tRPC `node.counts`); Keycloak's OIDC discovery (what a sign-in starts with); EF_UP's `gateway` consumer",
    "  (pending + unacknowledged); each site's agents' outboxes; the rollout's lease (held and current) and the",
    "  nodes running its version, from Postgres.",
    "- **agents delivering**: site A's agents have no more reports waiting than in steady reporting (99th",
    "  percentile before the first kill); **ingest caught up**: likewise for EF_UP's backlog.",
    "- Kills: the NATS node that leads EF_UP's stream; the gateway that holds the rollout's lease; Postgres's",
    "  postmaster with every backend; Mimir; Keycloak (its launcher and JVM). Each starts again at once from the",
    "  same command (Postgres through the stack scripts, after its crash recovery).",
    "- The partition: site B's leaf reaches every hub node through a TCP relay (one per node, the bundle's URLs",
    "  rewritten to them); cutting drops every relayed connection and refuses new ones until restored. The hub",
    "  does not advertise its nodes' leafnode addresses (`no_advertise`), so the leaf cannot go around the cut.",
    "- Rollout: updated twice and left behind as in the rollout benchmark (`packages/bench/src/rollout/measure.ts`:",
    "  dispatch rows, desired-version commits and the agents' own version switches).",
    "",
  );
  if (results.problems.length > 0)
    push("## Problems in this run", "", ...results.problems.map((problem) => `- ${problem}`), "");
  if (results.notes.length > 0) push("## Notes", "", ...results.notes.map((note) => `- ${note}`), "");
  return `${lines.join("\n")}\n`;
}
