import { writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import type { TopLevelSpec } from "vega-lite";
import { renderSvg } from "../charts.js";
import type { MachineInfo } from "../machine.js";
import { step } from "../progress.js";
import { REPO_ROOT } from "../stack.js";
import type { LatencySummary } from "../stats.js";
import type { AlertLatencySummary } from "./measure.js";

export const RESULTS = "alerts-results.json";
export const CHART = "alerts-path.svg";

export interface AlertsResults {
  command: string;
  profile: string;
  commit: string;
  machine: MachineInfo;
  loadAverage: number[];
  at: string;
  nodes: number;
  online: number;
  forMinutes: number;
  staggerSeconds: number;
  intervals: {
    heartbeatS: number;
    offlineAfterMs: number;
    sweepIntervalMs: number;
    livenessBoundMs: number;
    seriesIntervalMs: number;
    evaluationIntervalS: number;
    /** As uploaded to the organization's Alertmanager (read back from Mimir). */
    groupWait: string;
    deliveryPollMs: number;
  };
  webhooks: number;
  rejectedWebhooks: number;
  summary: AlertLatencySummary;
  /** Per node, ms after its agent stopped (null: not observed). */
  paths: Array<{
    node: string;
    stoppedAt: number;
    offlineMs: number | null;
    seriesZeroMs: number | null;
    firedMs: number | null;
    relayedMs: number | null;
    deliveredMs: number | null;
  }>;
  notes: string[];
}

const seconds = (ms: number | undefined) => (ms === undefined ? "—" : (ms / 1000).toFixed(1));
const row = (label: string, s: LatencySummary | null) =>
  `| ${label} | ${s?.count ?? 0} | ${seconds(s?.p50)} | ${seconds(s?.p90)} | ${seconds(s?.p99)} | ${seconds(s?.max)} |`;

const STAGES = [
  ["offlineMs", "1 liveness: stopped → offline in Postgres"],
  ["seriesZeroMs", "2 series: → 0 in Mimir"],
  ["firedMs", "3 ruler (incl. for): → firing"],
  ["relayedMs", "4 Alertmanager → relay outbox"],
  ["deliveredMs", "5 delivery: → webhook received"],
] as const;

/** One bar per node, its path split at each observed step (seconds after its agent stopped). */
export function pathChartSpec(results: AlertsResults): TopLevelSpec {
  const values: Array<{ node: string; stage: string; from: number; to: number; order: number }> = [];
  const sorted = [...results.paths].sort((a, b) => (a.deliveredMs ?? Infinity) - (b.deliveredMs ?? Infinity));
  for (const [rank, path] of sorted.entries()) {
    let from = 0;
    for (const [order, [key, stage]] of STAGES.entries()) {
      const at = path[key];
      if (at === null) continue;
      values.push({
        node: String(rank + 1).padStart(3, "0"),
        stage,
        from: from / 1000,
        to: at / 1000,
        order,
      });
      from = at;
    }
  }
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: 640,
    height: Math.max(200, sorted.length * 6),
    title: `Node stopped → alert webhook received, ${results.paths.length} nodes (policy for = ${results.forMinutes} min)`,
    data: { values },
    layer: [
      {
        mark: "bar",
        encoding: {
          y: {
            field: "node",
            type: "ordinal",
            title: "nodes, by delivery time",
            axis: { labels: false, ticks: false },
          },
          x: { field: "from", type: "quantitative", title: "seconds after the agent stopped" },
          x2: { field: "to" },
          color: { field: "stage", type: "nominal", sort: STAGES.map(([, stage]) => stage), title: null },
        },
      },
      {
        data: { values: [{ at: (results.intervals.livenessBoundMs + results.forMinutes * 60_000) / 1000 }] },
        mark: { type: "rule", strokeDash: [4, 4], color: "black" },
        encoding: { x: { field: "at", type: "quantitative" } },
      },
    ],
    config: { legend: { orient: "bottom", columns: 2, labelLimit: 320 } },
  };
}

export async function writeAlertsReport(results: AlertsResults, outDir: string): Promise<void> {
  await writeFile(join(outDir, CHART), await renderSvg(pathChartSpec(results)));
  const s = results.summary;
  const i = results.intervals;
  const forS = results.forMinutes * 60;
  const markdown = `# Alert latency: a node stops → its alert reaches a webhook

Measured by \`${results.command}\` on ${results.at.slice(0, 16).replace("T", " ")} UTC (commit \`${results.commit.slice(0, 10)}\`,
stack profile \`${results.profile}\`), on ${results.machine.cores} cores (${results.machine.cpuModel}, ${results.machine.memoryGiB} GiB)
shared with other agents' builds and test stacks (load average at the end: ${results.loadAverage.join(", ")}).
Raw numbers: [\`${RESULTS}\`](${RESULTS}).

${results.online} of ${results.nodes} hollow agents (real protocol and credentials, one NATS connection each)
online on the profile's real Postgres, NATS hub and Mimir (ruler and Alertmanager), the gateway started
by the benchmark with its default intervals. One \`node_offline\` policy (\`forMinutes: ${results.forMinutes}\`,
severity critical, selector \`bench=alerts\`) and one webhook channel to a receiver on loopback that checks
every delivery's Standard Webhooks signature with the channel's secret (${results.webhooks} verified,
${results.rejectedWebhooks} rejected). Once the ruler had loaded the rule and Mimir held a 1 for every node,
all ${s.stopped} agents were stopped ${results.staggerSeconds > 0 ? `over ${results.staggerSeconds} s` : "at once"}; each node counts at the first webhook carrying its
\`node\` label.

## End to end

| | nodes | p50 s | p90 s | p99 s | max s |
|---|---:|---:|---:|---:|---:|
${row("agent stopped → webhook received", s.total)}
${row(`… minus the policy's \`for\` (${forS} s)`, s.beyondFor)}
${row(`… minus \`for\` and the liveness bound (${seconds(i.livenessBoundMs)} s)`, s.beyondForAndLiveness)}

${s.delivered} of ${s.stopped} stopped nodes alerted.
The liveness bound is the gateway's documented one (apps/gateway/README.md): a node is marked offline
when not seen for 3 heartbeat intervals + slack (${i.heartbeatS} s heartbeat: ${seconds(i.offlineAfterMs)} s),
by the next sweep (every ${seconds(i.sweepIntervalMs)} s). The last row is therefore what alerting adds once a node
counts as offline: it is negative for a node that went offline before the bound (its last heartbeat
was written well before it stopped).

## Where the time goes

Each step timed where it can be observed: the offline transition by a trigger in Postgres
(\`clock_timestamp()\`), the series by its first 0 sample in Mimir (the publisher's timestamp), the
ruler by the alert's \`startsAt\` (when the rule fired), the relay by its outbox row's \`created_at\`,
delivery by the receiver's clock. All on one machine, one clock.

| step | nodes | p50 s | p90 s | p99 s | max s |
|---|---:|---:|---:|---:|---:|
${row("1 liveness: agent stopped → offline in Postgres", s.stages.liveness)}
${row(`2 series: offline → first 0 in Mimir (published every ${seconds(i.seriesIntervalMs)} s)`, s.stages.series)}
${row(`3 ruler: first 0 → firing, minus \`for\` (evaluated every ${i.evaluationIntervalS} s)`, s.stages.rulerBeyondFor)}
${row(`4 firing → relay's outbox row (Alertmanager group wait in effect: ${i.groupWait})`, s.stages.alertmanagerToRelay)}
${row(`5 outbox → webhook received (delivery worker polls every ${seconds(i.deliveryPollMs)} s)`, s.stages.delivery)}

![each node's path, by step](${CHART})

The dashed line is \`for\` + the liveness bound: to its right is what Edgefleet's alerting adds.

## Reading the numbers

- Steps 2 and 3 are sampling: the publisher writes the liveness series every ${seconds(i.seriesIntervalMs)} s and
  the ruler evaluates every ${i.evaluationIntervalS} s, so each adds up to one interval (half of one on
  average). A \`for\` of N minutes fires on the first evaluation at least N minutes after the
  first evaluation that saw the 0, so step 3 beyond \`for\` is one evaluation interval at most.
- Step 4 is Alertmanager's group wait as uploaded by the gateway (${i.groupWait}) plus the notification
  to the relay and its commit. docs/alerts.md documents 10 s for critical (30 s warning, 1 min
  info), but \`GATEWAY_ALERT_GROUP_WAIT_S\` (apps/gateway/src/env.ts) is
  \`integerInRange(…, 0).optional()\`: Zod 4 applies the default inside \`.optional()\`, so an install
  without the variable overrides every severity's group wait with 0 s (and
  \`GATEWAY_ALERT_GROUP_INTERVAL_S\` every group interval with 60 s). With the documented 10 s, step 4
  would be about 10 s longer.
- All ${s.stopped} agents stopping together is the worst case for grouping: each node is its own group
  (\`node_offline\` groups by node), so Alertmanager sends ${s.stopped} notifications in the same second.
- The machine was shared: these are upper bounds for the work the gateway and Mimir do, but the
  intervals above dominate and do not depend on load.
${results.notes.map((note) => `- ${note}`).join("\n")}
`;
  await writeFile(join(outDir, "alerts.md"), markdown);
  step(`wrote ${relative(REPO_ROOT, join(outDir, "alerts.md"))}`);
}
