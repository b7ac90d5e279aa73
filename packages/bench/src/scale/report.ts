import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TopLevelSpec } from "vega-lite";
import { renderSvg } from "../charts.js";
import { disconnectBoundMs, livenessBound } from "../liveness.js";
import type { LatencySummary } from "../stats.js";
import { apiSloVerdict } from "./api-slo.js";
import type { GoHeapSummary, GoProfileSummary } from "./go-profile.js";
import { cpuByPhase, FLIGHTCTL, TARGETS, type Verdict, verdict } from "./measure.js";
import type { ProfilePair, ScaleResults } from "./results.js";

/** docs/benchmarks/scale.md, its charts and scale-results.json, from one run's results. */

const PREFIX = "scale";
const base = { $schema: "https://vega.github.io/schema/vega-lite/v6.json", width: 640, height: 260 } as const;

export function scaleChartSpecs(results: ScaleResults): Record<string, TopLevelSpec> {
  const t0 = results.timeline[0]?.at ?? 0;
  const over = results.timeline.map((s) => ({
    component: s.component,
    minutes: Math.round(((s.at - t0) / 60_000) * 100) / 100,
    cpu: Math.round(s.cpuPercent * 10) / 10,
    pss: Math.round(s.pssMiB),
    phase: s.phase,
  }));
  return {
    "fleet-over-time": {
      ...base,
      title: `Nodes enrolled and online (${results.config.nodes} hollow nodes on ${results.config.sites} site leaves)`,
      data: { values: results.fleetSeries },
      mark: { type: "line", interpolate: "step-after" },
      encoding: {
        x: { field: "seconds", type: "quantitative", title: "seconds since enrollment began" },
        y: { field: "count", type: "quantitative", title: "nodes" },
        color: { field: "series", type: "nominal", title: null },
      },
    },
    latency: {
      ...base,
      title: "Latency distributions per phase (value at each percentile)",
      data: { values: results.latencyCurves.map((p) => ({ ...p, ms: Math.max(1, p.ms) })) },
      mark: { type: "line", interpolate: "step-after" },
      encoding: {
        x: { field: "percentile", type: "quantitative" },
        y: { field: "ms", type: "quantitative", title: "milliseconds (log)", scale: { type: "log" } },
        color: { field: "metric", type: "nominal", title: null },
      },
    },
    cpu: {
      ...base,
      title: "CPU per component over the run (percent of one core)",
      data: { values: over },
      mark: { type: "line", strokeWidth: 1.2 },
      encoding: {
        x: { field: "minutes", type: "quantitative", title: "minutes since the stack was up" },
        y: { field: "cpu", type: "quantitative", title: "CPU %" },
        color: { field: "component", type: "nominal", title: null },
      },
    },
    memory: {
      ...base,
      title: "Memory per component over the run (PSS, MiB)",
      data: { values: over },
      mark: { type: "line", strokeWidth: 1.2 },
      encoding: {
        x: { field: "minutes", type: "quantitative", title: "minutes since the stack was up" },
        y: { field: "pss", type: "quantitative", title: "MiB" },
        color: { field: "component", type: "nominal", title: null },
      },
    },
  };
}

const ms = (value: number | null | undefined) =>
  value === null || value === undefined ? "—" : `${Math.round(value)} ms`;
const fixed = (value: number | null | undefined, digits = 1) =>
  value === null || value === undefined || Number.isNaN(value) ? "—" : value.toFixed(digits);
const p99 = (summary: LatencySummary | null | undefined) => summary?.p99 ?? null;
const mark = (v: Verdict) => (v === "met" ? "met" : v === "missed" ? "**missed**" : "not measured");

export function renderScaleReport(results: ScaleResults, charts: readonly string[]): string {
  const { config, idle } = results;
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);
  const small = config.nodes < 100_000;
  push(
    "# Scale scenario (issue 16)",
    "",
    `Written by \`${commandWithoutNotes(results.command)}\` on ${results.machine.date} (commit ${results.commit}). Do not edit by hand:`,
    "run the command again (or `pnpm bench:scale --render-only --note …` to re-render from the JSON).",
    "",
    `**Size of this run: ${config.nodes.toLocaleString("en")} hollow nodes on ${config.sites} site leaf nats-servers, ${config.appsPerNode} apps per node (${(config.nodes * config.appsPerNode).toLocaleString("en")} app instances).**${small ? " This is not the 100,000-node run the issue asks for; see “What the 100,000 run needs”." : ""}`,
    "",
    `Machine: ${results.machine.cpuModel}, ${results.machine.cores} cores, ${results.machine.memoryGiB} GiB, ${results.machine.os}, Node ${results.machine.node}, nats-server ${results.natsVersion}.`,
    `Load average (1/5/15 min) at the start ${results.load.start.map((v) => v.toFixed(2)).join(" / ")}, at the end ${results.load.end.map((v) => v.toFixed(2)).join(" / ")} — the machine was shared with other work while this ran, so CPU figures are upper bounds.`,
    "",
    "Topology: the hub nats-server (with `isolate_leafnode_interest`), one leaf nats-server per site made from the",
    "site leaf bundle (`POST /internal/sites/{id}/leaf-bundle`, the operator's download), the gateway, Postgres, Mimir.",
    `Nodes enroll through the hub (the enrollment account lives there), then node \`i\` connects to the leaf of site \`i mod ${config.sites}\`.`,
    `Generator: ${config.hollowProcesses} ${(config.generator ?? "node") === "go" ? "process(es) of the native agent's hollow mode (`edgefleet-agent hollow --control stdio`, Go)" : "Node worker process(es) of agent-sdk hollow agents"} (real protocol, one connection and credentials per node, heartbeat ${config.heartbeatSeconds} s, metrics ${config.metricsSeconds} s).`,
    ...(config.memoryLimits
      ? [
          `Memory bounds (GOGC=50 and a GOMEMLIMIT backstop, so that the edge side fits on one machine beside the control plane): each site leaf ${config.memoryLimits.leaf}${config.memoryLimits.generator ? `, each generator process ${config.memoryLimits.generator}` : ""}. The hub, the gateway and Postgres run without one.`,
        ]
      : []),
    "",
  );

  push("## SLIs against their objectives", "", "| SLI | objective | measured | |", "|---|---|---|---|");
  const row = (what: string, objective: string, measured: string, v: Verdict) =>
    push(`| ${what} | ${objective} | ${measured} | ${mark(v)} |`);
  const lat = results.latency;
  row(
    "agent connected → online in Postgres, p99",
    "≤ 5 s",
    ms(p99(lat["agent connected → online"])),
    verdict(p99(lat["agent connected → online"]), TARGETS.connectToOnlineP99Ms),
  );
  row(
    "desired committed → app running, p99 (rollout)",
    "≤ 5 s",
    ms(p99(lat["desired committed → running (rollout)"])),
    verdict(p99(lat["desired committed → running (rollout)"]), TARGETS.desiredToRunningP99Ms),
  );
  row(
    "agent gone → offline, p99 (churn)",
    `≤ ${disconnectBoundMs() / 1000} s (connection closed: the DISCONNECT event; silent: ${livenessBound(config.heartbeatSeconds).boundMs / 1000} s)`,
    ms(p99(lat["agent gone → offline (churn)"])),
    verdict(p99(lat["agent gone → offline (churn)"]), disconnectBoundMs()),
  );
  const hub = results.hubRestart;
  row(
    "hub restart: whole fleet heard from again",
    "≤ 60 s",
    hub?.heardAllSeconds != null
      ? `${fixed(hub.heardAllSeconds)} s`
      : hub
        ? `${hub.heardAgain} of ${config.nodes} within the bound`
        : "—",
    verdict(hub?.heardAllSeconds ?? null, TARGETS.resyncSeconds),
  );
  row(
    "hub restart: full re-lists",
    "0",
    hub ? String(hub.fullLists) : "—",
    verdict(hub?.fullLists ?? null, TARGETS.fullLists),
  );
  row(
    "idle uplink per node",
    "≤ 0.05 kbit/s",
    idle.uplinkKbitPerSecond !== null
      ? `${fixed(idle.uplinkKbitPerSecond, 4)} kbit/s (${fixed(idle.uplinkBytesPerNodePerMinute)} B/min)`
      : "—",
    verdict(idle.uplinkKbitPerSecond, TARGETS.uplinkKbitPerSecond),
  );
  row(
    "control-plane CPU per node, idle",
    "≤ 0.4 CPU-ms/min",
    `${fixed(idle.cost.cpuMsPerNodePerMinute, 3)} CPU-ms/min`,
    verdict(idle.cost.cpuMsPerNodePerMinute, TARGETS.cpuMsPerNodePerMinute),
  );
  row(
    "control-plane memory per node, idle (above the no-fleet baseline)",
    "≤ 18 KB",
    `${fixed(idle.cost.memoryKiBPerNode)} KiB (${fixed(idle.cost.memoryKiBPerNodeTotal)} KiB counting the baseline)`,
    verdict(idle.cost.memoryKiBPerNode, TARGETS.memoryKiBPerNode),
  );
  const api = results.api ?? [];
  const apiSlo = apiSloVerdict(api);
  row(
    "API p99 for single-object calls during idle and churn",
    "≤ 1 s",
    api.length === 0
      ? "not run (--api-seconds 0, or a run before it was measured)"
      : apiSlo.worstP99Ms === null
        ? "no answers"
        : `${ms(apiSlo.worstP99Ms)} (worst of GET /nodes/{id}, /sites/{id}, /apps/{id} over ${api.map((p) => p.phase).join(" and ")})`,
    api.length === 0 ? "not measured" : apiSlo.met ? "met" : "missed",
  );
  push("");

  push(
    "## Cost per node against flightctl",
    "",
    "| | CPU-ms per node per minute | memory per node |",
    "|---|---|---|",
    `| flightctl (its simulator, 10,000 devices, this machine kind) | ${FLIGHTCTL.cpuMsPerNodePerMinute} | ${FLIGHTCTL.memoryKiBPerNode} KB |`,
    `| Edgefleet target | ${TARGETS.cpuMsPerNodePerMinute} | ${TARGETS.memoryKiBPerNode} KB |`,
    `| **Edgefleet, this run (${config.nodes} nodes; nats-server hub + gateway + Postgres)** | **${fixed(idle.cost.cpuMsPerNodePerMinute, 3)}** | **${fixed(idle.cost.memoryKiBPerNode)} KiB** above baseline, ${fixed(idle.cost.memoryKiBPerNodeTotal)} KiB in all |`,
    "",
    "Per component over the idle window (mean; the baseline is the 10 s before any node existed):",
    "",
    "| component | CPU % of a core | CPU-ms/min per node | PSS MiB | baseline PSS MiB |",
    "|---|---|---|---|---|",
  );
  for (const c of idle.cost.components)
    push(
      `| ${c.component} | ${fixed(c.cpuPercent, 2)} | ${fixed((c.cpuPercent * 600) / idle.cost.nodes, 3)} | ${fixed(c.pssMiB)} | ${fixed(c.baselinePssMiB)} |`,
    );
  push(
    "",
    `Leaves are edge-side cost (one per site box) and are not in the control-plane figure. Mimir is reported per active series: ${idle.mimirActiveSeries ?? "—"} series in memory, ${fixed(idle.mimirPssMiB)} MiB PSS${idle.mimirActiveSeries && idle.mimirPssMiB ? ` = ${fixed((idle.mimirPssMiB * 1024) / idle.mimirActiveSeries, 2)} KiB per series` : ""}.`,
    "",
  );

  push("## Where the idle CPU goes", "");
  push(
    ...profileSections(
      { gateway: results.gatewayProfile, hub: results.hubProfile ?? null, leaf: results.leafProfile ?? null },
      "an idle window",
      "idle",
    ),
  );
  push(...memorySections(results.memoryProfiles ?? null));
  const v = idle.hubVarz;
  push(
    `Hub nats-server at the end of the idle window (/varz): ${v.connections ?? "—"} client connections, ${v.leafnodes ?? "—"} leaf nodes, ${v.subscriptions ?? "—"} subscriptions, ${fixed(idle.hubMsgsPerSecond)} messages/s in = ${fixed((idle.hubMsgsPerSecond * 60) / Math.max(1, config.nodes), 2)} messages per node per minute (a metrics report every ${config.metricsSeconds} s and the gateway's JetStream ack of it; a heartbeat every ${config.heartbeatSeconds} s only when no report was acknowledged for that long), cpu ${fixed(v.cpu)} %, mem ${fixed((v.mem ?? 0) / 1024 / 1024)} MiB.`,
    "",
  );

  push("## Phases", "", "| phase | figures |", "|---|---|");
  push(
    `| enrollment | ${results.enrollment.enrolled} nodes in ${fixed(results.enrollment.seconds)} s = **${fixed(results.enrollment.perSecond)} nodes/s**${results.enrollment.failures ? `, ${results.enrollment.failures} failed` : ""} |`,
  );
  push(
    `| desired state | ${results.desiredApps.instances} app instances committed (setDesiredAppsForNodes, 1,000 nodes a call) in ${fixed(results.desiredApps.seconds)} s |`,
  );
  push(
    `| connect | ${results.connect.online} online${results.connect.allOnlineSeconds !== null ? `, all after ${fixed(results.connect.allOnlineSeconds)} s` : ""}; ${results.connect.appsRunning} app instances running${results.connect.allRunningSeconds !== null ? ` after ${fixed(results.connect.allRunningSeconds)} s` : ""} |`,
  );
  push(`| idle | ${idle.windowSeconds} s window: see the cost tables |`);
  if (results.rollout)
    push(
      `| rollout of app-0 2.0.0 to every node, ${results.rollout.batches} batches | ${results.rollout.running} of ${results.rollout.nodes} on the version, ${results.rollout.status}${results.rollout.seconds !== null ? ` after ${fixed(results.rollout.seconds)} s` : ""} |`,
    );
  if (hub)
    push(
      `| hub restart with the fleet online | hub down ${hub.serverDownMs} ms; all leaves back on the hub after ${hub.leavesBackMs ?? "—"} ms; ${hub.heardAgain} nodes heard from again${hub.heardAllSeconds !== null ? ` (all within ${fixed(hub.heardAllSeconds)} s)` : ""}; ${hub.offlineMarked} marked offline; ${hub.fullLists} full re-lists; ${hub.hellos} Hellos (agents stay on their leaves: no reconnect) |`,
    );
  const leaf = results.leafRestart;
  if (leaf)
    push(
      `| restart of leaf ${leaf.site} | ${leaf.resynced} of ${leaf.siteNodes} of its agents reconnected and resynced${leaf.resyncedAllSeconds !== null ? ` within ${fixed(leaf.resyncedAllSeconds)} s` : ""}; other sites: ${leaf.otherSitesOffline} nodes offline, ${leaf.otherSitesHellos} reconnects among 2,000 watched |`,
    );
  if (results.churn) {
    push(
      `| churn | ${results.churn.cycles} cycle(s) of ${results.churn.nodesPerCycle} nodes (${config.churnPercent} %) stopped until offline and started again, every ${config.churnPeriodSeconds} s; memory slope per component below |`,
    );
  }
  push("");
  const phases = cpuByPhase(results.usage, results.machine.cores);
  if (phases.length > 0) {
    const components = [...new Set(phases.flatMap((p) => Object.keys(p.byComponent)))];
    push(
      `CPU by phase (mean percent of one core; the machine has ${results.machine.cores} cores, ${results.machine.cores * 100} % in all, shared by the control plane and the edge side):`,
      "",
      `| phase | ${components.join(" | ")} | all | of the machine |`,
      `|---|${components.map(() => "---|").join("")}---|---|`,
    );
    for (const p of phases)
      push(
        `| ${p.phase} | ${components.map((c) => fixed(p.byComponent[c])).join(" | ")} | ${fixed(p.totalPercent)} | ${fixed(p.machineShare * 100, 0)} % |`,
      );
    push("");
  }
  if (results.churn) {
    push(
      "Memory slope over the churn phase (least squares of PSS; short windows exaggerate it):",
      "",
      "| component | MiB per hour | over minutes |",
      "|---|---|---|",
    );
    for (const s of results.churn.memorySlopes)
      push(`| ${s.component} | ${fixed(s.pssMiBPerHour, 2)} | ${fixed(s.minutes)} |`);
    push("");
  }
  push("Latencies (ms):", "", "| metric | count | p50 | p90 | p99 | max |", "|---|---|---|---|---|---|");
  for (const [metric, s] of Object.entries(results.latency))
    push(
      s
        ? `| ${metric} | ${s.count} | ${Math.round(s.p50)} | ${Math.round(s.p90)} | ${Math.round(s.p99)} | ${Math.round(s.max)} |`
        : `| ${metric} | 0 | — | — | — | — |`,
    );
  push("");

  if (results.rolloutProfile) {
    push(
      "## Where the rollout's CPU goes",
      "",
      "The same two profiles over the rollout's first minute, while batches were dispatched and their nodes reported (the desired → running SLI):",
      "",
      ...profileSections(results.rolloutProfile, "the rollout's first minute", "rollout"),
    );
  }
  if (api.length > 0) {
    push(
      "API calls through the console (REST, a viewer key, one call at a time) while the fleet was idle and while it churned (ms):",
      "",
      "| phase | call | count | errors | p50 | p95 | p99 | max |",
      "|---|---|---|---|---|---|---|---|",
    );
    for (const phaseResult of api)
      for (const c of phaseResult.cases)
        push(
          c.summary
            ? `| ${phaseResult.phase} | ${c.label} | ${c.summary.count} | ${c.summary.errors} | ${Math.round(c.summary.p50)} | ${Math.round(c.summary.p95)} | ${Math.round(c.summary.p99)} | ${Math.round(c.summary.max)} |`
            : `| ${phaseResult.phase} | ${c.label} | 0 | ${c.firstError ? c.firstError.replaceAll("|", "/").slice(0, 120) : "—"} | — | — | — | — |`,
        );
    push("");
  }

  push(
    "## The generator: what one simulated node costs",
    "",
    "| generator | nodes | RSS per node | CPU-ms per node per minute | process baseline |",
    "|---|---|---|---|---|",
  );
  for (const g of results.generators)
    push(
      `| ${g.generator} | ${g.connected}/${g.nodes} | ${fixed(g.rssKiBPerNode)} KiB | ${fixed(g.cpuMsPerNodePerMinute, 3)} | ${g.baselineRssMiB ? `${fixed(g.baselineRssMiB)} MiB` : "in the per-node figure"} |`,
    );
  push("");

  push("## Charts", "", ...charts.map((file) => `![${file}](${file})`), "");
  push(
    "## What the 100,000 run needs",
    "",
    "- A quiet machine of this kind (2 cores, 24 GB): `pnpm bench:scale` (defaults: 100,000 nodes, 50 sites, 10 apps per node, 3 churn cycles of 5 min; ~1.5–2 h).",
    memoryProjection(results, 100_000),
    "- Open files: 20,000 per process (hard) — 50 sites = 2,000 agents per leaf, and the generator (Go or Node) is split into ⌈nodes / 12,500⌉ processes (≤ 15,000 connections each).",
    "- The generator's CPU and memory compete with the control plane on 2 cores: the native hollow mode (`--generator go`, the default) costs less per node than agent-sdk workers (`--generator node`); the table above says how much.",
    "",
  );
  if (results.problems.length > 0)
    push("## Problems in this run", "", ...results.problems.map((p) => `- ${p}`), "");
  if (results.notes.length > 0) push("## Notes", "", ...results.notes.map((n) => `- ${n}`), "");
  push("Raw numbers: [scale-results.json](scale-results.json).", "");
  return lines.join("\n");
}

/** The gateway's V8 profile and the hub's Go profile over one window, as tables. */
function profileSections(pair: ProfilePair, window: string, name: string): string[] {
  const out: string[] = [];
  const p = pair.gateway;
  if (p) {
    out.push(
      `A V8 CPU profile of the running gateway over ${window} (its internal \`/debug/cpu-profile\`, no restart): ${fixed(p.busyMs, 0)} ms busy in ${fixed(p.windowMs / 1000, 0)} s = ${fixed((p.busyMs * 100) / Math.max(1, p.windowMs), 2)} % of a core (the /proc sampler saw ${fixed(p.gatewayCpuPercent, 2)} % for the whole process tree, tsx's launcher and the profiler included).`,
      "",
      "| package | self ms | share of busy |",
      "|---|---|---|",
      ...p.byPackage.map((e) => `| ${e.fn} | ${fixed(e.selfMs, 0)} | ${fixed(e.percent)} % |`),
      "",
      "| function | self ms | share of busy |",
      "|---|---|---|",
      ...p.top.map(
        (e) => `| \`${e.fn.replace(/\|/g, "\\|")}\` | ${fixed(e.selfMs, 0)} | ${fixed(e.percent)} % |`,
      ),
      "",
    );
  } else out.push("No gateway profile over this window (`--no-profile`, or see the problems below).", "");
  const goSections = (h: GoProfileSummary, what: string, file: string) => {
    const rows = (entries: typeof h.flat) =>
      entries.map((e) => `| \`${e.fn.replace(/\|/g, "\\|")}\` | ${fixed(e.ms, 0)} | ${fixed(e.percent)} % |`);
    out.push(
      `${what} over the same window (its Go profiler, \`prof_port\`; \`go tool pprof -top\` of var/scale/profiles/${file}-${name}.pprof): ${fixed(h.busyMs, 0)} ms of CPU in ${fixed(h.windowMs / 1000, 0)} s = ${fixed((h.busyMs * 100) / Math.max(1, h.windowMs), 2)} % of a core.`,
      "",
      "| function, with what it calls (cum) | ms | share |",
      "|---|---|---|",
      ...rows(h.cumulative),
      "",
      "| function, own time (flat) | ms | share |",
      "|---|---|---|",
      ...rows(h.flat),
      "",
    );
  };
  if (pair.hub) goSections(pair.hub, "The hub nats-server", "hub");
  if (pair.leaf)
    goSections(pair.leaf, "One site leaf nats-server (an edge-side cost, one per site box)", "leaf");
  return out;
}

/**
 * The hub's and a leaf's memory at the end of the idle window: heap by allocation site, and the
 * goroutine stacks the heap profile does not show, each per node served.
 */
function memorySections(memory: ScaleResults["memoryProfiles"]): string[] {
  if (!memory) return [];
  const out: string[] = ["## Where the idle memory goes", ""];
  const kib = (bytes: number, nodes: number) => fixed(bytes / 1024 / Math.max(1, nodes), 1);
  const section = (h: GoHeapSummary | null, what: string, file: string, nodes: number) => {
    if (!h) return;
    out.push(
      `${what}, serving ${nodes} nodes (\`go tool pprof -sample_index=inuse_space -top\` of var/scale/profiles/${file}-heap-idle.pprof, and its runtime's figures): heap in use ${fixed(h.heapInuseBytes / 2 ** 20)} MiB = **${kib(h.heapInuseBytes, nodes)} KiB per node**, goroutine stacks ${fixed(h.stackBytes / 2 ** 20)} MiB = **${kib(h.stackBytes, nodes)} KiB per node** (${h.goroutines ?? "—"} goroutines), ${fixed(h.sysBytes / 2 ** 20)} MiB from the OS.`,
      "",
      "| allocation site (live bytes, sampled) | KiB per node | share |",
      "|---|---|---|",
      ...h.top
        .filter((e) => e.bytes > 0)
        .map((e) => `| \`${e.fn.replace(/\|/g, "\\|")}\` | ${kib(e.bytes, nodes)} | ${fixed(e.percent)} % |`),
      "",
    );
  };
  section(memory.hub, "The hub nats-server", "hub", memory.nodes);
  section(memory.leaf, "One site leaf nats-server (edge side)", "leaf", memory.leafNodes);
  return out;
}

/** The command as run, its `--note` texts left out (they are printed under Notes). */
function commandWithoutNotes(command: string): string {
  const notes = command.indexOf(" --note ");
  return notes < 0 ? command : `${command.slice(0, notes)} --note …`;
}

export async function writeScaleReport(results: ScaleResults, outDir: string): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  const charts: string[] = [];
  for (const [name, spec] of Object.entries(scaleChartSpecs(results))) {
    const file = `${PREFIX}-${name}.svg`;
    writeFileSync(join(outDir, file), await renderSvg(spec));
    charts.push(file);
  }
  // The committed JSON leaves out the per-sample timeline's bulk beyond what the charts show.
  writeFileSync(
    join(outDir, "scale-results.json"),
    `${JSON.stringify({ ...results, timeline: undefined }, null, 2)}\n`,
  );
  const reportFile = join(outDir, "scale.md");
  writeFileSync(reportFile, renderScaleReport(results, charts));
  return reportFile;
}

/**
 * What every component would hold at `nodes`, from this run's idle figures: each one's PSS above
 * its no-fleet baseline, per node, times `nodes`, plus the baseline (the generators have none).
 */
function memoryProjection(results: ScaleResults, nodes: number): string {
  const idle = results.idle;
  if (!idle || idle.cost.nodes === 0) return "- Memory: no idle figures in this run to project from.";
  const parts = idle.cost.components
    .filter((c) => c.component !== "bench driver" && c.component !== "console (web)")
    .map((c) => ({
      component: c.component,
      gib: (c.baselinePssMiB + ((c.pssMiB - c.baselinePssMiB) / idle.cost.nodes) * nodes) / 1024,
    }));
  const total = parts.reduce((sum, part) => sum + part.gib, 0);
  return `- Memory, projected from this run's idle figures (PSS above each component's baseline, per node, × ${nodes.toLocaleString("en")}): ${parts.map((p) => `${p.component} ${p.gib.toFixed(1)} GiB`).join(", ")}; **${total.toFixed(1)} GiB in all**, against ${results.machine.memoryGiB} GiB on this machine.`;
}
