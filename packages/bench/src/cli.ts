/**
 * pnpm bench:edge [--nodes 10000] [--hollow-processes 5] [--connect-rate 500] [--idle-seconds 180]
 *                 [--restart-sample 500] [--enroll-concurrency 16] [--out docs/benchmarks]
 *
 * The edge data path benchmark: hollow agents against the real stack (bench profile) on this
 * machine. Writes docs/benchmarks/edge-data-path.md with charts. Stops everything it started,
 * also on failure and Ctrl-C.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createEnrollmentToken, createPrismaClient, type Db, setDesiredApps } from "@edgefleet/db";
import { writeCharts } from "./charts.js";
import { type Cleanup, runWithCleanup } from "./interrupt.js";
import { livenessBound } from "./liveness.js";
import { describeMachine, gitCommit } from "./machine.js";
import { connectionBytes, serverVersion, trafficBetween } from "./nats-monitor.js";
import { latenciesFrom, PgEvents } from "./pg-events.js";
import { ProcSampler, rssKiBOf, usageByPhase } from "./proc.js";
import { Progress, step } from "./progress.js";
import {
  buildAgentBundle,
  measureEmptyNode,
  measureReferenceAgent,
  type ReferenceAgentResult,
  referenceAgentEntries,
} from "./reference-agent.js";
import { renderReport } from "./report.js";
import { type BenchResults, percentileCurve } from "./results.js";
import {
  benchStackRunning,
  GatewayProcess,
  LOG_DIR,
  migrate,
  PROFILE,
  pidOf,
  postgresPid,
  REPO_ROOT,
  restartNats,
  stackDown,
  stackUp,
  VAR_DIR,
} from "./stack.js";
import { cumulativeSeries, ratePerSecond, spreadSample, summarize, uplinkPerNode } from "./stats.js";
import { WorkerPool } from "./workers.js";

class UsageError extends Error {}

function positiveInt(name: string, value: string | undefined, max: number): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > max)
    throw new UsageError(`--${name} must be an integer from 1 to ${max}, got ${JSON.stringify(value)}`);
  return number;
}

function readOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      nodes: { type: "string", default: "10000" },
      "hollow-processes": { type: "string", default: "5" },
      "connect-rate": { type: "string", default: "500" },
      // Per worker process: agents in their connect handshake at once (admission control).
      "connect-in-flight": { type: "string", default: "64" },
      // Writes a V8 CPU profile of each hollow worker to var/bench/profiles (where the time goes).
      "profile-workers": { type: "boolean", default: false },
      "idle-seconds": { type: "string", default: "180" },
      "restart-sample": { type: "string", default: "500" },
      // Nodes the desired-state rollout goes to (spread over the fleet).
      "rollout-nodes": { type: "string", default: "2000" },
      "enroll-concurrency": { type: "string", default: "16" },
      "reference-seconds": { type: "string", default: "45" },
      out: { type: "string", default: "docs/benchmarks" },
      // Context for readers the run cannot know (e.g. what happened at a larger scale).
      note: { type: "string", multiple: true, default: [] },
      // Re-renders the report from var/bench/results.json (e.g. with a --note), no measuring.
      "render-only": { type: "boolean", default: false },
    },
  });
  // The hub allows 19,500 connections (20,000 open files per process, SETUP-FACTS); keep room for
  // the gateway and the reference agents. One worker process holds at most ~15,000 connections.
  const nodes = positiveInt("nodes", values.nodes, 19_000);
  const hollowProcesses = positiveInt("hollow-processes", values["hollow-processes"], 64);
  if (nodes / hollowProcesses > 15_000)
    throw new UsageError(
      `--hollow-processes ${hollowProcesses} gives over 15,000 connections per process: use more`,
    );
  return {
    nodes,
    hollowProcesses,
    connectPerSecond: positiveInt("connect-rate", values["connect-rate"], 100_000),
    connectInFlight: positiveInt("connect-in-flight", values["connect-in-flight"], 100_000),
    profileWorkers: values["profile-workers"] ?? false,
    idleSeconds: positiveInt("idle-seconds", values["idle-seconds"], 3_600),
    restartSample: Math.min(nodes, positiveInt("restart-sample", values["restart-sample"], 19_000)),
    rolloutNodes: Math.min(nodes, positiveInt("rollout-nodes", values["rollout-nodes"], 19_000)),
    enrollConcurrency: positiveInt("enroll-concurrency", values["enroll-concurrency"], 1_000),
    referenceSeconds: positiveInt("reference-seconds", values["reference-seconds"], 3_600),
    outDir: resolve(REPO_ROOT, values.out ?? "docs/benchmarks"),
    notes: values.note ?? [],
    renderOnly: values["render-only"] ?? false,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(
  progress: Progress,
  total: number,
  timeoutMs: number,
  count: () => Promise<number>,
  detail: (done: number) => string = () => "",
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let done = 0;
  while (Date.now() < deadline) {
    done = await count();
    progress.update(done, detail(done));
    if (done >= total) break;
    await sleep(500);
  }
  return done;
}

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2));
  const command = ["pnpm bench:edge", ...process.argv.slice(2)].join(" ");
  if (options.renderOnly) {
    const results = JSON.parse(readFileSync(RESULTS_FILE, "utf8")) as BenchResults;
    await writeReport({ ...results, notes: [...(results.notes ?? []), ...options.notes] }, options.outDir);
    return;
  }
  await runWithCleanup((cleanup) => run(options, command, cleanup));
}

async function run(
  options: ReturnType<typeof readOptions>,
  command: string,
  cleanup: Cleanup,
): Promise<void> {
  const problems: string[] = [];
  const heartbeatSeconds = 30;
  const metricsSeconds = 60;
  const livenessFlushMs = 2_000;

  if (benchStackRunning())
    throw new UsageError(
      "a bench stack is already running (another benchmark?); stop it with: EDGEFLEET_PROFILE=bench bash scripts/stack/down.sh",
    );
  step(
    `starting the ${PROFILE} stack (Postgres, NATS hub, Mimir, Keycloak; logs in ${relative(REPO_ROOT, LOG_DIR)})`,
  );
  const stackStarting = stackUp();
  cleanup.add("stack down", async () => {
    // Interrupted while it starts: let up.sh finish first, or down.sh would miss what it starts next.
    await stackStarting.catch(() => undefined);
    step(`stopping the ${PROFILE} stack`);
    await stackDown();
  });
  const env = await stackStarting;
  const need = (name: string) => {
    const value = env[name];
    if (!value) throw new Error(`var/bench/stack.env has no ${name}`);
    return value;
  };
  migrate(env);
  const events = await PgEvents.open(need("DATABASE_URL"));
  cleanup.add("close Postgres", () => events.close());
  const db: Db = createPrismaClient(need("DATABASE_URL"));
  cleanup.add("close Prisma", () => db.$disconnect());

  const gatewayEnv = {
    GATEWAY_HEARTBEAT_INTERVAL_S: String(heartbeatSeconds),
    GATEWAY_METRICS_INTERVAL_S: String(metricsSeconds),
    GATEWAY_LIVENESS_FLUSH_MS: String(livenessFlushMs),
  };
  const gateway = await GatewayProcess.start(env, gatewayEnv);
  cleanup.add("stop the gateway", () => gateway.stop());
  step(`gateway ready at ${gateway.url}`);

  let pool: WorkerPool | undefined;
  const sampler = new ProcSampler(() => ({
    "nats-server": { roots: [pidOf("nats") ?? 0], tree: true },
    gateway: { roots: [gateway.child.pid ?? 0], tree: true },
    postgres: { roots: [postgresPid() ?? 0], tree: true },
    mimir: { roots: [pidOf("mimir") ?? 0], tree: true },
    keycloak: { roots: [pidOf("keycloak") ?? 0], tree: true },
    "hollow agents": { roots: pool?.pids() ?? [], tree: false },
    "bench driver": { roots: [process.pid], tree: false },
  }));
  sampler.start();
  cleanup.add("stop sampling", () => sampler.stop());

  const organization = await db.organization.create({
    data: { slug: `bench-${Date.now()}`, name: "Benchmark" },
  });
  const { token } = await createEnrollmentToken(db, organization.id, {
    expiresAt: new Date(Date.now() + 6 * 3_600_000),
    maxUses: options.nodes,
    labels: { bench: "edge-data-path" },
    description: "benchmark: hollow fleet",
  });
  const app = await db.app.create({ data: { organizationId: organization.id, name: "idle" } });
  const version = await db.appVersion.create({
    data: {
      organizationId: organization.id,
      appId: app.id,
      version: "1.0.0",
      artifactUrl: "builtin:sleep",
      runSpec: { command: ["sleep", "1000000"] },
    },
  });

  step(`forking ${options.hollowProcesses} hollow-agent processes`);
  const profileDir = options.profileWorkers ? join(VAR_DIR, "profiles") : undefined;
  if (profileDir) {
    rmSync(profileDir, { recursive: true, force: true });
    mkdirSync(profileDir, { recursive: true });
    step(`hollow workers write CPU profiles to ${relative(REPO_ROOT, profileDir)}`);
  }
  pool = await WorkerPool.start(options.hollowProcesses, LOG_DIR, profileDir);
  const workers = pool;
  // What the worker processes weigh before any agent exists (Node, the SDK, the NATS client).
  const hollowBaselineKiB = rssKiBOf(workers.pids());
  cleanup.add("stop the hollow agents", () => workers.stop());

  // --- enrollment -------------------------------------------------------------------------------
  sampler.phase = "enroll";
  const enrollStart = Date.now();
  const enrollProgress = new Progress("enroll", options.nodes);
  const enrollTicker = setInterval(() => {
    const { enrolled } = workers.totals();
    const seconds = (Date.now() - enrollStart) / 1000;
    enrollProgress.update(enrolled, `${(enrolled / Math.max(seconds, 0.001)).toFixed(0)} nodes/s`);
  }, 500);
  const enrolled = await workers
    .enroll(options.nodes, {
      token,
      natsUrl: need("NATS_URL"),
      enrollCreds: await readFile(need("NATS_ENROLL_CREDS"), "utf8"),
      namePrefix: "bench",
      concurrency: options.enrollConcurrency,
    })
    .finally(() => clearInterval(enrollTicker));
  const enrolledTimes = await events.enrolledTimes(organization.id);
  const enrollSeconds = ((enrolledTimes.at(-1) ?? enrollStart) - enrollStart) / 1000;
  const enrollRate = ratePerSecond(enrolledTimes);
  enrollProgress.finish(
    `${enrolled.nodes.length} nodes in ${enrollSeconds.toFixed(1)} s, ${enrollRate.toFixed(0)} nodes/s`,
  );
  if (enrolled.failures > 0)
    problems.push(
      `${enrolled.failures} of ${options.nodes} enrollments failed (first: ${enrolled.firstError}).`,
    );
  const nids = enrolled.nodes.map((node) => node.nid);

  // --- connect: agents come online --------------------------------------------------------------
  sampler.phase = "connect";
  const connectStart = Date.now();
  const connectProgress = new Progress("online", nids.length);
  const startedPromise = workers.connect(options.connectPerSecond, options.connectInFlight);
  // Admission control paces the starts by how fast handshakes complete, not only by --connect-rate.
  const connectTimeout = Math.max(300_000, (nids.length / options.connectPerSecond) * 3_000);
  const online = await waitUntil(
    connectProgress,
    nids.length,
    connectTimeout,
    () => events.countSince("node:online", connectStart),
    () => `started ${workers.totals().started}, connected ${workers.totals().connected}`,
  );
  const started = await startedPromise;
  const onlineEvents = await events.eventsSince("node:online", connectStart);
  const connectLatency = latenciesFrom(started, onlineEvents);
  const allOnlineSeconds = ((onlineEvents.at(-1)?.at ?? Date.now()) - connectStart) / 1000;
  connectProgress.finish(`${online} online; all after ${allOnlineSeconds.toFixed(1)} s`);
  if (connectLatency.missing.length > 0)
    problems.push(
      `${connectLatency.missing.length} nodes never came online within ${connectTimeout / 1000} s.`,
    );

  // --- desired state rollout --------------------------------------------------------------------
  sampler.phase = "rollout";
  const rolloutStart = Date.now();
  // A spread sample: the driver commits one node at a time through setDesiredApps (a Prisma
  // transaction of ~9 statements), and that, not the edge path, bounds the rollout rate here.
  const rolloutNids = spreadSample(nids, options.rolloutNodes);
  const rolloutProgress = new Progress("rollout", rolloutNids.length);
  const committed: Array<{ nid: string; at: number }> = [];
  let rolloutFailures = 0;
  let nextNode = 0;
  const setter = async () => {
    while (nextNode < rolloutNids.length) {
      const nid = rolloutNids[nextNode++] as string;
      // A starved machine can run a transaction past Prisma's 5 s limit (P2028): try again.
      for (let attempt = 1; ; attempt++) {
        try {
          await setDesiredApps(db, organization.id, nid, { put: [version.id] });
          committed.push({ nid, at: Date.now() });
          break;
        } catch (error) {
          if (attempt >= 3) {
            rolloutFailures++;
            process.stderr.write(
              `setDesiredApps ${nid} failed: ${error instanceof Error ? error.message : error}\n`,
            );
            break;
          }
        }
      }
    }
  };
  const setting = Promise.all(Array.from({ length: 12 }, setter));
  const running = await waitUntil(
    rolloutProgress,
    rolloutNids.length,
    Math.max(180_000, rolloutNids.length * 120),
    () => events.countSince("app:running", rolloutStart),
    () => `set ${committed.length}`,
  );
  await setting;
  const setSeconds = ((committed.at(-1)?.at ?? rolloutStart) - rolloutStart) / 1000;
  const runningEvents = await events.eventsSince("app:running", rolloutStart);
  const desiredLatency = latenciesFrom(committed, runningEvents);
  const allRunningSeconds = ((runningEvents.at(-1)?.at ?? Date.now()) - rolloutStart) / 1000;
  rolloutProgress.finish(`${running} running; all after ${allRunningSeconds.toFixed(1)} s`);
  if (desiredLatency.missing.length > 0)
    problems.push(`${desiredLatency.missing.length} app instances did not reach running.`);
  if (rolloutFailures > 0)
    problems.push(`setDesiredApps failed for ${rolloutFailures} nodes (3 tries each).`);

  // --- idle uplink ------------------------------------------------------------------------------
  sampler.phase = "settle";
  const monitorUrl = need("NATS_MONITOR_URL");
  const settleProgress = new Progress("settle", 30);
  for (let second = 0; second < 30; second++) {
    settleProgress.update(second);
    await sleep(1_000);
  }
  settleProgress.finish("status reports of the rollout delivered");
  sampler.phase = "idle";
  const before = await connectionBytes(monitorUrl, "bench-");
  const idleStart = Date.now();
  const idleProgress = new Progress("idle", options.idleSeconds);
  while (Date.now() - idleStart < options.idleSeconds * 1000) {
    idleProgress.update(Math.floor((Date.now() - idleStart) / 1000), `${before.length} agent connections`);
    await sleep(1_000);
  }
  const after = await connectionBytes(monitorUrl, "bench-");
  const idleWindowMs = Date.now() - idleStart;
  const traffic = trafficBetween(before, after);
  const uplink =
    traffic.connections > 0 ? uplinkPerNode(traffic.inBytes, traffic.connections, idleWindowMs) : null;
  idleProgress.finish(
    uplink
      ? `${uplink.bytesPerMinute.toFixed(1)} B/min per node = ${uplink.kbitPerSecond.toFixed(4)} kbit/s`
      : "no agent connections found",
  );
  if (!uplink) problems.push("No agent connections were found in /connz: idle uplink not measured.");

  // --- reconnect storm: the hub restarts with the whole fleet online ---------------------------
  sampler.phase = "storm";
  const stormProgress = new Progress("storm", started.length);
  const metricsBeforeStorm = await gateway.metricsText().catch(() => "");
  const resyncWatch = workers.watchHellos(STORM_TIMEOUT_MS);
  await sleep(1_000); // the workers note each agent's Hello count before the server goes
  const stormTicker = setInterval(
    () => stormProgress.update(workers.totals().connected, "agents connected"),
    500,
  );
  const restart = await restartNats(monitorUrl).finally(() => clearInterval(stormTicker));
  const resyncTicker = setInterval(
    () =>
      stormProgress.update(
        workers.totals().connected,
        `server back after ${restart.readyAt - restart.stoppedAt} ms`,
      ),
    500,
  );
  const resynced = await resyncWatch.finally(() => clearInterval(resyncTicker));
  const metricsAfterStorm = await gateway.metricsText().catch(() => "");
  const counterDelta = (name: string, label?: string) =>
    counterValue(metricsAfterStorm, `edgefleet_gateway_${name}`, label) -
    counterValue(metricsBeforeStorm, `edgefleet_gateway_${name}`, label);
  const resyncLatencies = resynced.nodes.map((node) => Math.max(0, node.at - restart.stoppedAt));
  const lastResync = Math.max(...resynced.nodes.map((node) => node.at));
  const reconnectStorm = {
    nodes: resynced.watched,
    resynced: resynced.nodes.length,
    serverDownMs: restart.readyAt - restart.stoppedAt,
    convergedSeconds:
      resynced.nodes.length === resynced.watched && resynced.watched > 0
        ? (lastResync - restart.stoppedAt) / 1000
        : null,
    resync: summarize(resyncLatencies),
    fullLists: counterDelta("desired_full_lists_total"),
    helloDeltas: counterDelta("desired_deltas_total", 'via="hello"'),
    hellos: counterDelta("edge_messages_total", 'type="hello"'),
  };
  stormProgress.finish(
    reconnectStorm.convergedSeconds === null
      ? `${reconnectStorm.resynced} of ${reconnectStorm.nodes} resynced within ${STORM_TIMEOUT_MS / 1000} s`
      : `all ${reconnectStorm.nodes} resynced ${fixedSeconds(reconnectStorm.convergedSeconds)} after the restart, ${reconnectStorm.fullLists} re-lists`,
  );
  if (reconnectStorm.convergedSeconds === null)
    problems.push(
      `Reconnect storm: ${reconnectStorm.nodes - reconnectStorm.resynced} of ${reconnectStorm.nodes} agents did not resync within ${STORM_TIMEOUT_MS / 1000} s of the hub's restart.`,
    );

  // --- restart sample: offline visible, then online again; the reference agent meanwhile --------
  sampler.phase = "restart";
  const sample = spreadSample(nids, options.restartSample);
  if (!buildAgentBundle()) problems.push("The agent bundle did not build: only the tsx agent was measured.");
  const referenceRuns = referenceAgentEntries().map(({ variant, entry }) =>
    measureReferenceAgent({
      db,
      organizationId: organization.id,
      appVersionId: version.id,
      natsUrl: need("NATS_URL"),
      enrollCredsFile: need("NATS_ENROLL_CREDS"),
      variant,
      entry,
      seconds: options.referenceSeconds,
      logFile: join(LOG_DIR, `bench-reference-agent-${variant}.log`),
    }).catch((error: unknown): ReferenceAgentResult | undefined => {
      problems.push(
        `Reference agent (${variant}) not measured: ${error instanceof Error ? error.message : error}`,
      );
      return undefined;
    }),
  );
  const stopMark = Date.now();
  const stopped = await workers.stopAgents(sample);
  const liveness = livenessBound(heartbeatSeconds, livenessFlushMs);
  const offlineBoundMs = liveness.offlineAfterMs;
  const offlineProgress = new Progress("offline", sample.length);
  await waitUntil(offlineProgress, sample.length, offlineBoundMs + 60_000, () =>
    events.countSince("node:offline", stopMark),
  );
  const offlineLatency = latenciesFrom(stopped, await events.eventsSince("node:offline", stopMark));
  offlineProgress.finish(`${offlineLatency.latencies.length} of ${sample.length} offline`);
  if (offlineLatency.missing.length > 0)
    problems.push(`${offlineLatency.missing.length} stopped agents were not marked offline in time.`);
  const restartMark = Date.now();
  const restarted = await workers.restartAgents(sample);
  const restartProgress = new Progress("restart", sample.length);
  await waitUntil(restartProgress, sample.length, 120_000, () =>
    events.countSince("node:online", restartMark),
  );
  const restartLatency = latenciesFrom(restarted, await events.eventsSince("node:online", restartMark));
  restartProgress.finish(`${restartLatency.latencies.length} of ${sample.length} online again`);
  if (restartLatency.missing.length > 0)
    problems.push(`${restartLatency.missing.length} restarted agents did not come back online.`);
  step("reference agent RSS (real CLI, process runtime)");
  const emptyNodeMemory = await measureEmptyNode().catch(() => undefined);
  const referenceAgent = (await Promise.all(referenceRuns)).filter(
    (result): result is ReferenceAgentResult => result !== undefined,
  );

  // --- wrap up ----------------------------------------------------------------------------------
  const gatewayCounters = countersOf(await gateway.metricsText().catch(() => ""));
  sampler.sample();
  sampler.stop();
  const usage = usageByPhase(sampler.samples).filter((entry) => entry.phase !== "start");
  const hollowIdle = usage.find((entry) => entry.component === "hollow agents" && entry.phase === "idle");

  const results: BenchResults = {
    command,
    commit: gitCommit(REPO_ROOT),
    natsVersion: await serverVersion(monitorUrl).catch(() => "unknown"),
    machine: describeMachine(),
    config: {
      nodes: options.nodes,
      hollowProcesses: options.hollowProcesses,
      connectPerSecond: options.connectPerSecond,
      connectInFlight: options.connectInFlight,
      idleSeconds: options.idleSeconds,
      restartSample: sample.length,
      heartbeatSeconds,
      metricsSeconds,
      livenessFlushMs,
    },
    enrollment: {
      enrolled: enrolled.nodes.length,
      failures: enrolled.failures,
      seconds: enrollSeconds,
      perSecond: enrollRate,
    },
    fleetSeries: [
      ...cumulativeSeries(enrolledTimes, enrollStart).map((point) => ({
        ...point,
        series: "enrolled" as const,
      })),
      ...cumulativeSeries(
        onlineEvents.map((event) => event.at),
        enrollStart,
      ).map((point) => ({ ...point, series: "online" as const })),
    ],
    latency: {
      connectToOnline: summarize(connectLatency.latencies),
      desiredToRunning: summarize(desiredLatency.latencies),
      stopToOffline: summarize(offlineLatency.latencies),
      restartToOnline: summarize(restartLatency.latencies),
    },
    latencyCurves: [
      ...percentileCurve("agent started → online", connectLatency.latencies),
      ...percentileCurve("restarted → online", restartLatency.latencies),
      ...percentileCurve("desired → running", desiredLatency.latencies),
      ...percentileCurve("stopped → offline", offlineLatency.latencies),
      ...percentileCurve("hub restarted → resynced", resyncLatencies),
    ],
    offlineBoundMs: liveness.boundMs,
    rollout: {
      nodes: committed.length,
      seconds: setSeconds,
      setPerSecond: setSeconds > 0 ? committed.length / setSeconds : 0,
      allRunningSeconds,
    },
    allOnlineSeconds,
    connectStartedPerSecond: ratePerSecond(started.map((node) => node.at).sort((a, b) => a - b)),
    idleUplink:
      uplink && traffic
        ? {
            windowSeconds: Math.round(idleWindowMs / 1000),
            connections: traffic.connections,
            inBytes: traffic.inBytes,
            outBytes: traffic.outBytes,
            inMsgs: traffic.inMsgs,
            bytesPerMinute: uplink.bytesPerMinute,
            kbitPerSecond: uplink.kbitPerSecond,
            msgsPerMinute: (traffic.inMsgs / traffic.connections) * (60_000 / idleWindowMs),
            outBytesPerMinute: (traffic.outBytes / traffic.connections) * (60_000 / idleWindowMs),
          }
        : null,
    reconnectStorm,
    usage,
    timeline: sampler.samples.filter((sample) => sample.phase !== "start"),
    hollowRssKiBPerNode: hollowIdle
      ? (hollowIdle.rssMiBMax * 1024 - hollowBaselineKiB) / options.nodes
      : null,
    hollowBaselineMiB: hollowBaselineKiB / 1024,
    referenceAgent,
    ...(emptyNodeMemory ? { emptyNodeMemory } : {}),
    gatewayCounters,
    problems,
    notes: options.notes,
  };

  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  printSummary(results, relative(REPO_ROOT, await writeReport(results, options.outDir)));
}

const RESULTS_FILE = join(REPO_ROOT, "var", PROFILE, "results.json");
/** How long the reconnect storm may take before the run reports what did not resync. */
const STORM_TIMEOUT_MS = 180_000;
const fixedSeconds = (seconds: number) => `${seconds.toFixed(1)} s`;

async function writeReport(results: BenchResults, outDir: string): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  const charts = await writeCharts(results, outDir, "edge-data-path");
  const reportFile = join(outDir, "edge-data-path.md");
  writeFileSync(reportFile, renderReport(results, charts));
  return reportFile;
}

/** Totals of the gateway's edge counters (label sets summed), for the report. */
function countersOf(metricsText: string): Record<string, number> {
  const wanted = [
    "edgefleet_gateway_enrollments_total",
    "edgefleet_gateway_edge_accepted_total",
    "edgefleet_gateway_edge_rejected_total",
    "edgefleet_gateway_desired_deltas_total",
    "edgefleet_gateway_desired_full_lists_total",
    "edgefleet_gateway_liveness_updates_total",
    "edgefleet_gateway_liveness_rows_total",
    "edgefleet_gateway_nodes_marked_offline_total",
  ];
  const totals: Record<string, number> = {};
  for (const line of metricsText.split("\n")) {
    if (line.startsWith("#")) continue;
    const name = line.split(/[{ ]/, 1)[0] ?? "";
    if (!name.startsWith("edgefleet_gateway_") || !name.endsWith("_total")) continue;
    if (wanted.length > 0 && !wanted.includes(name) && !name.includes("desired") && !name.includes("edge_"))
      continue;
    totals[name] = (totals[name] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return totals;
}

/** Sum of a counter's series, only those with `label` (e.g. `via="hello"`) when given. */
function counterValue(metricsText: string, name: string, label?: string): number {
  let sum = 0;
  for (const line of metricsText.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (label && !line.includes(label)) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

function printSummary(results: BenchResults, reportFile: string): void {
  const row = (what: string, value: string) => process.stdout.write(`  ${what.padEnd(38)} ${value}\n`);
  const pair = (summary: { p50: number; p99: number } | null) =>
    summary ? `p50 ${Math.round(summary.p50)} ms, p99 ${Math.round(summary.p99)} ms` : "not measured";
  process.stdout.write("\nSummary\n");
  row("enrollment rate", `${results.enrollment.perSecond.toFixed(1)} nodes/s`);
  row("agent started → online", pair(results.latency.connectToOnline));
  row("restarted → online", pair(results.latency.restartToOnline));
  row("stopped → offline", pair(results.latency.stopToOffline));
  row("desired → running", pair(results.latency.desiredToRunning));
  if (results.idleUplink)
    row(
      "idle uplink per node",
      `${results.idleUplink.bytesPerMinute.toFixed(1)} B/min = ${results.idleUplink.kbitPerSecond.toFixed(4)} kbit/s (target ≤ 0.05)`,
    );
  if (results.reconnectStorm)
    row(
      "reconnect storm (hub restart)",
      `${results.reconnectStorm.resynced}/${results.reconnectStorm.nodes} resynced, ${pair(results.reconnectStorm.resync)}, ${results.reconnectStorm.fullLists} re-lists`,
    );
  for (const agent of results.referenceAgent)
    row(`reference agent RSS (${agent.variant})`, `${agent.rssMiBLast.toFixed(1)} MiB (target ≤ 40)`);
  if (results.hollowRssKiBPerNode !== null)
    row("hollow agent RSS per node", `${results.hollowRssKiBPerNode.toFixed(1)} KiB`);
  for (const usage of results.usage.filter((entry) => entry.phase === "idle" || entry.phase === "connect"))
    row(
      `${usage.component} (${usage.phase})`,
      `CPU ${usage.cpuPercentMean.toFixed(1)} % mean, PSS ${Math.round(usage.pssMiBMax)} MiB`,
    );
  for (const problem of results.problems) process.stdout.write(`  ! ${problem}\n`);
  process.stdout.write(`\nReport: ${reportFile}\n`);
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`bench:edge: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `bench:edge failed: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
  );
  process.exit(1);
});
