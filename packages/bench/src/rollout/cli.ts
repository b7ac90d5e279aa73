/**
 * pnpm bench:rollout [--nodes 1000] [--hollow-processes N] [--kill-batch 3] [--artifact-kib 1024]
 *                     [--cpu-prof DIR]
 * pnpm bench:rollout --scenario gates [--nodes 2000] [--good-runs 20] [--profile work1] (scenario (a),
 *   issue 11: metric gates; see gates/cli.ts)
 * pnpm bench:rollout --scenario site-cache [--nodes 50] [--artifact-mib 20] [--budget-bytes-per-second N]
 *   (scenario (b), issue 11: apps/gateway/test/bench/site-cache-bench.ts; source a stack.env first)
 *
 * The rollout benchmark (issue 10): hollow agents that really fetch a 1 MiB uploaded artifact,
 * a rollout in 5 batches driven by the gateway's controller, then the same with the gateway
 * `kill -9`ed mid-batch and restarted. Writes docs/benchmarks/rollout.md with charts and
 * docs/benchmarks/rollout-results.json. Stops everything it started, also on failure and Ctrl-C.
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { MAX_ARTIFACT_CHUNK_BYTES } from "@edgefleet/agent-sdk/protocol";
import { createEnrollmentToken, createPrismaClient, type Db } from "@edgefleet/db";
import { rolloutStrategySchema } from "@edgefleet/rollout";
import { actOnRollout, insertRollout } from "@edgefleet/rollout-store";
import { type Cleanup, runWithCleanup } from "../interrupt.js";
import { describeMachine, gitCommit } from "../machine.js";
import { connectionBytes, serverTraffic, serverVersion, trafficBetween } from "../nats-monitor.js";
import { PgEvents } from "../pg-events.js";
import { ProcSampler, usageByPhase } from "../proc.js";
import { Progress, step } from "../progress.js";
import {
  benchStackRunning,
  GatewayProcess,
  LOG_DIR,
  migrate,
  PROFILE,
  pidOf,
  postgresPid,
  REPO_ROOT,
  stackDown,
  stackUp,
  VAR_DIR,
  waitUntilPortFree,
} from "../stack.js";
import { ratePerSecond, summarize } from "../stats.js";
import { WorkerPool } from "../workers.js";
import { writeRolloutCharts } from "./charts.js";
import { RolloutFacts } from "./instrumentation.js";
import {
  allLatencies,
  cpuSecondsBetween,
  leftBehind,
  measureBatches,
  runningSeries,
  updatedTwice,
} from "./measure.js";
import { renderRolloutReport } from "./report.js";
import type { KillMeasurement, RolloutBenchResults, RolloutRun } from "./results.js";

class UsageError extends Error {}

const BATCHES = 5;
const TICK_MS = 1_000;
const LEASE_MS = 5_000;
const NODE_TIMEOUT_SECONDS = 1_800;
const NAME_PREFIX = "rollout";

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
      nodes: { type: "string", default: "1000" },
      "hollow-processes": { type: "string" },
      "connect-rate": { type: "string", default: "500" },
      "connect-in-flight": { type: "string", default: "64" },
      "enroll-concurrency": { type: "string", default: "16" },
      "artifact-kib": { type: "string", default: "1024" },
      // 1-based batch in which the gateway is killed (the second run).
      "kill-batch": { type: "string", default: "3" },
      // Which rollouts to run, in this order: "clean" (no fault), "kill" (gateway kill -9 mid-batch).
      runs: { type: "string", default: "clean,kill" },
      // Stop waiting for rollouts after this many minutes from the start and report what was
      // measured by then (a rollout still moving is reported as not completed).
      "max-minutes": { type: "string", default: "600" },
      out: { type: "string", default: "docs/benchmarks" },
      note: { type: "string", multiple: true, default: [] },
      "render-only": { type: "boolean", default: false },
      // Write V8 CPU profiles of the gateway and the hollow-agent workers here (on their exit).
      "cpu-prof": { type: "string" },
    },
  });
  const nodes = positiveInt("nodes", values.nodes, 19_000);
  // ~2,000 agents per worker process: each also hashes every chunk it fetches.
  const hollowProcesses = positiveInt(
    "hollow-processes",
    values["hollow-processes"] ?? String(Math.max(1, Math.ceil(nodes / 2_000))),
    64,
  );
  if (nodes / hollowProcesses > 15_000)
    throw new UsageError(`--hollow-processes ${hollowProcesses} gives over 15,000 connections per process`);
  const runs = (values.runs ?? "").split(",").map((run) => run.trim());
  if (runs.length === 0 || runs.some((run) => run !== "clean" && run !== "kill"))
    throw new UsageError(`--runs must list clean and/or kill, got ${JSON.stringify(values.runs)}`);
  return {
    nodes,
    runs: runs.map((run) => run === "kill"),
    deadline: Date.now() + positiveInt("max-minutes", values["max-minutes"], 10_000) * 60_000,
    hollowProcesses,
    connectPerSecond: positiveInt("connect-rate", values["connect-rate"], 100_000),
    connectInFlight: positiveInt("connect-in-flight", values["connect-in-flight"], 100_000),
    enrollConcurrency: positiveInt("enroll-concurrency", values["enroll-concurrency"], 1_000),
    artifactBytes: positiveInt("artifact-kib", values["artifact-kib"], 256 * 1024) * 1024,
    killBatch: positiveInt("kill-batch", values["kill-batch"], BATCHES) - 1,
    outDir: resolve(REPO_ROOT, values.out ?? "docs/benchmarks"),
    notes: values.note ?? [],
    renderOnly: values["render-only"] ?? false,
    cpuProfileDir: values["cpu-prof"] === undefined ? undefined : resolve(values["cpu-prof"]),
  };
}

type Options = ReturnType<typeof readOptions>;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const RESULTS_FILE = join(VAR_DIR, "rollout-results.json");

async function main(): Promise<void> {
  // Scenario (b), the site cache and bandwidth budget: its own driver, next to the gateway it needs.
  const scenario = process.argv.indexOf("--scenario");
  if (scenario >= 0) {
    const name = process.argv[scenario + 1];
    if (name !== "site-cache" && name !== "gates")
      throw new UsageError(`--scenario must be site-cache or gates, got ${JSON.stringify(name)}`);
    const rest = process.argv.slice(2).filter((_, i) => i + 2 !== scenario && i + 2 !== scenario + 1);
    if (name === "gates") {
      // Scenario (a), metric gates: its own process, which imports the stack module with its --profile.
      const gates = spawnSync(
        process.execPath,
        [...process.execArgv, join(import.meta.dirname, "gates/cli.ts"), ...rest],
        { stdio: "inherit" },
      );
      process.exit(gates.status ?? 1);
    }
    const gatewayDir = join(REPO_ROOT, "apps/gateway");
    const run = spawnSync(
      process.execPath,
      [join(gatewayDir, "node_modules/tsx/dist/cli.mjs"), "test/bench/site-cache-bench.ts", ...rest],
      { cwd: gatewayDir, stdio: "inherit" },
    );
    process.exit(run.status ?? 1);
  }
  const options = readOptions(process.argv.slice(2));
  const command = ["pnpm bench:rollout", ...process.argv.slice(2)].join(" ");
  if (options.renderOnly) {
    const results = JSON.parse(readFileSync(RESULTS_FILE, "utf8")) as RolloutBenchResults;
    await writeReport({ ...results, notes: [...results.notes, ...options.notes] }, options.outDir);
    return;
  }
  await runWithCleanup((cleanup) => run(options, command, cleanup));
}

async function run(options: Options, command: string, cleanup: Cleanup): Promise<void> {
  const problems: string[] = [];
  if (benchStackRunning())
    throw new UsageError(
      "a bench stack is already running (another benchmark?); stop it with: EDGEFLEET_PROFILE=bench bash scripts/stack/down.sh",
    );
  step(`starting the ${PROFILE} stack without Keycloak (logs in ${relative(REPO_ROOT, LOG_DIR)})`);
  // No one signs in: Keycloak is not started (on a busy machine its start-up alone can time out).
  const stackStarting = stackUp({ keycloak: false });
  cleanup.add("stack down", async () => {
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
  cleanup.add("close Postgres (events)", () => events.close());
  const facts = await RolloutFacts.open(need("DATABASE_URL"));
  cleanup.add("close Postgres (facts)", () => facts.close());
  const db: Db = createPrismaClient(need("DATABASE_URL"));
  cleanup.add("close Prisma", () => db.$disconnect());

  if (options.cpuProfileDir) mkdirSync(options.cpuProfileDir, { recursive: true });
  const gatewayEnv = {
    GATEWAY_ROLLOUT_TICK_MS: String(TICK_MS),
    GATEWAY_ROLLOUT_LEASE_MS: String(LEASE_MS),
    GATEWAY_ARTIFACT_CACHE_DIR: join(VAR_DIR, "gateway-artifacts"),
  };
  let gateway = await GatewayProcess.start(env, gatewayEnv, cpuProfileArgs(options.cpuProfileDir));
  cleanup.add("stop the gateway", () => gateway.stop());
  step(`gateway ready at ${gateway.url}`);

  let pool: WorkerPool | undefined;
  const sampler = new ProcSampler(() => ({
    "nats-server": { roots: [pidOf("nats") ?? 0], tree: true },
    gateway: { roots: [gateway.child.pid ?? 0], tree: true },
    postgres: { roots: [postgresPid() ?? 0], tree: true },
    "hollow agents": { roots: pool?.pids() ?? [], tree: false },
    "bench driver": { roots: [process.pid], tree: false },
  }));
  sampler.start();
  cleanup.add("stop sampling", () => sampler.stop());

  const organization = await db.organization.create({
    data: { slug: `bench-rollout-${Date.now()}`, name: "Rollout benchmark" },
  });
  const { token } = await createEnrollmentToken(db, organization.id, {
    expiresAt: new Date(Date.now() + 6 * 3_600_000),
    maxUses: options.nodes,
    labels: { bench: "rollout" },
    description: "benchmark: hollow fleet for rollouts",
  });
  const app = await db.app.create({ data: { organizationId: organization.id, name: "bench-app" } });

  step(`forking ${options.hollowProcesses} hollow-agent processes (they really fetch artifacts)`);
  pool = await WorkerPool.start(options.hollowProcesses, LOG_DIR, options.cpuProfileDir);
  const workers = pool;
  cleanup.add("stop the hollow agents", () => workers.stop());

  // --- enroll and connect, as bench:edge does ----------------------------------------------------
  sampler.phase = "enroll";
  const enrollStart = Date.now();
  const enrollProgress = new Progress("enroll", options.nodes);
  const enrollTicker = setInterval(() => enrollProgress.update(workers.totals().enrolled), 500);
  const enrolled = await workers
    .enroll(options.nodes, {
      token,
      natsUrl: need("NATS_URL"),
      enrollCreds: await readFile(need("NATS_ENROLL_CREDS"), "utf8"),
      namePrefix: NAME_PREFIX,
      concurrency: options.enrollConcurrency,
      fetchArtifacts: true,
    })
    .finally(() => clearInterval(enrollTicker));
  const enrolledTimes = await events.enrolledTimes(organization.id);
  const enrollSeconds = ((enrolledTimes.at(-1) ?? enrollStart) - enrollStart) / 1000;
  enrollProgress.finish(`${enrolled.nodes.length} nodes in ${enrollSeconds.toFixed(1)} s`);
  if (enrolled.failures > 0)
    problems.push(
      `${enrolled.failures} of ${options.nodes} enrollments failed (first: ${enrolled.firstError}).`,
    );

  sampler.phase = "connect";
  const connectStart = Date.now();
  const connectProgress = new Progress("online", enrolled.nodes.length);
  const starting = workers.connect(options.connectPerSecond, options.connectInFlight);
  let online = 0;
  const connectDeadline =
    Date.now() + Math.max(300_000, (enrolled.nodes.length / options.connectPerSecond) * 3_000);
  while (Date.now() < connectDeadline) {
    online = await events.countSince("node:online", connectStart);
    connectProgress.update(online, `connected ${workers.totals().connected}`);
    if (online >= enrolled.nodes.length) break;
    await sleep(500);
  }
  await starting;
  const onlineSeconds = (Date.now() - connectStart) / 1000;
  connectProgress.finish(`${online} online after ${onlineSeconds.toFixed(1)} s`);
  if (online < enrolled.nodes.length)
    problems.push(`${enrolled.nodes.length - online} nodes never came online before the rollouts.`);

  // --- the two rollouts ----------------------------------------------------------------------------
  const monitorUrl = need("NATS_MONITOR_URL");
  const runs: RolloutRun[] = [];
  for (const [index, kill] of options.runs.entries()) {
    if (Date.now() >= options.deadline) {
      problems.push(`--max-minutes reached: the ${kill ? "kill -9" : "clean"} rollout was not run.`);
      continue;
    }
    const versionLabel = `${index + 1}.0.0`;
    const name = kill ? "kill -9 mid-batch" : "clean";
    sampler.phase = name;
    step(
      `rollout ${index + 1}: ${versionLabel} to every node, ${BATCHES} batches${kill ? `, gateway kill -9 in batch ${options.killBatch + 1}` : ""}`,
    );
    const version = await uploadVersion(
      db,
      env,
      organization.id,
      app.id,
      versionLabel,
      options.artifactBytes,
    );
    const outcome = await runRollout({
      db,
      facts,
      organizationId: organization.id,
      appId: app.id,
      versionId: version.id,
      versionLabel,
      nodes: enrolled.nodes.length,
      monitorUrl,
      killBatch: kill ? options.killBatch : null,
      deadline: options.deadline,
      restartGateway: async () => {
        const killedAt = Date.now();
        gateway.kill();
        await new Promise((resolve) =>
          gateway.child.exitCode !== null || gateway.child.signalCode !== null
            ? resolve(undefined)
            : gateway.child.once("exit", resolve),
        );
        await waitUntilPortFree(Number(env.GATEWAY_HTTP_PORT));
        gateway = await GatewayProcess.start(env, gatewayEnv, cpuProfileArgs(options.cpuProfileDir));
        return { killedAt, readyAt: Date.now() };
      },
    });
    const switches = await workers.updates();
    const twice = updatedTwice(outcome.facts, version.id, switches, versionLabel);
    const behind = leftBehind(
      enrolled.nodes.map((node) => node.nid),
      await facts.instances(app.id),
      version.id,
    );
    const endAt = outcome.finishedAt ?? Date.now();
    sampler.sample();
    const controllerCpuSeconds = cpuSecondsBetween(sampler.samples, "gateway", outcome.startedAt, endAt);
    const traffic = trafficBetween(
      outcome.agentBytesBefore,
      await connectionBytes(monitorUrl, `${NAME_PREFIX}-`),
    );
    const varzAfter = await serverTraffic(monitorUrl);
    const batches = measureBatches(outcome.facts, version.id, outcome.startedAt);
    const dispatched = batches.reduce((sum, batch) => sum + batch.nodes, 0);
    const result: RolloutRun = {
      name,
      versionLabel,
      nodes: enrolled.nodes.length,
      status: outcome.status,
      wallSeconds: outcome.finishedAt === null ? null : (outcome.finishedAt - outcome.startedAt) / 1000,
      batches,
      toRunning: summarize(allLatencies(outcome.facts, version.id)),
      controllerCpuSeconds,
      controllerCpuPercentMean: (controllerCpuSeconds * 100_000) / Math.max(1, endAt - outcome.startedAt),
      hub: {
        inBytes: varzAfter.inBytes - outcome.varzBefore.inBytes,
        outBytes: varzAfter.outBytes - outcome.varzBefore.outBytes,
        toAgentsBytes: traffic.outBytes,
        artifactBytes: dispatched * options.artifactBytes,
      },
      updatedTwice: twice,
      leftBehind: behind.length,
      kill: outcome.kill,
      loadAverage: outcome.loadAverage,
      runningSeries: runningSeries(outcome.facts, version.id, outcome.startedAt),
    };
    runs.push(result);
    if (outcome.finishedAt === null)
      problems.push(`${name}: the rollout did not complete (status ${outcome.status}).`);
    if (twice.nodes > 0)
      problems.push(`${name}: ${twice.nodes} nodes updated twice (e.g. ${twice.examples.join(", ")}).`);
    // A rollout stopped by the deadline has not left anyone behind: its nodes were still moving.
    if (behind.length > 0 && outcome.status !== "running")
      problems.push(`${name}: ${behind.length} nodes left behind (e.g. ${behind.slice(0, 5).join(", ")}).`);
    printRun(result);
  }

  sampler.sample();
  sampler.stop();
  const results: RolloutBenchResults = {
    command,
    commit: gitCommit(REPO_ROOT),
    natsVersion: await serverVersion(monitorUrl).catch(() => "unknown"),
    machine: describeMachine(),
    config: {
      nodes: options.nodes,
      hollowProcesses: options.hollowProcesses,
      batches: BATCHES,
      artifactBytes: options.artifactBytes,
      chunkBytes: MAX_ARTIFACT_CHUNK_BYTES,
      rolloutTickMs: TICK_MS,
      leaseMs: LEASE_MS,
      timeoutSeconds: NODE_TIMEOUT_SECONDS,
    },
    enrollment: {
      enrolled: enrolled.nodes.length,
      failures: enrolled.failures,
      seconds: enrollSeconds,
      perSecond: ratePerSecond(enrolledTimes),
    },
    online: { nodes: online, seconds: onlineSeconds },
    runs,
    usage: usageByPhase(sampler.samples).filter((entry) => entry.phase !== "start"),
    timeline: sampler.samples.filter((sample) => sample.phase !== "start"),
    problems,
    notes: options.notes,
  };
  mkdirSync(VAR_DIR, { recursive: true });
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  const report = await writeReport(results, options.outDir);
  for (const problem of problems) process.stdout.write(`  ! ${problem}\n`);
  process.stdout.write(`\nReport: ${relative(REPO_ROOT, report)}\n`);
}

/** A version whose artifact is `bytes` random bytes, uploaded as the console's upload does. */
async function uploadVersion(
  db: Db,
  env: Record<string, string>,
  organizationId: string,
  appId: string,
  label: string,
  bytes: number,
) {
  const body = randomBytes(bytes);
  const sha256 = createHash("sha256").update(body).digest("hex");
  const response = await fetch(`${env.GATEWAY_URL}/internal/orgs/${organizationId}/artifacts`, {
    method: "PUT",
    headers: {
      authorization: `Bearer ${env.GATEWAY_INTERNAL_TOKEN}`,
      "x-artifact-sha256": sha256,
      "content-length": String(bytes),
    },
    body,
    signal: AbortSignal.timeout(60_000),
  });
  if (!response.ok)
    throw new Error(`artifact upload answered HTTP ${response.status}: ${await response.text()}`);
  return db.appVersion.create({
    data: {
      organizationId,
      appId,
      version: label,
      artifactSource: "upload",
      artifactState: "ready",
      artifactSha256: sha256,
      artifactSize: BigInt(bytes),
      runSpec: { command: ["sleep", "1000000"] },
    },
  });
}

interface RolloutOutcome {
  startedAt: number;
  finishedAt: number | null;
  status: string;
  facts: Awaited<ReturnType<RolloutFacts["since"]>>;
  kill: KillMeasurement | null;
  varzBefore: Awaited<ReturnType<typeof serverTraffic>>;
  agentBytesBefore: Awaited<ReturnType<typeof connectionBytes>>;
  loadAverage: [number, number];
}

async function runRollout(input: {
  db: Db;
  facts: RolloutFacts;
  organizationId: string;
  appId: string;
  versionId: string;
  versionLabel: string;
  nodes: number;
  monitorUrl: string;
  killBatch: number | null;
  /** Stop waiting at this time (--max-minutes) and report what was measured. */
  deadline: number;
  restartGateway: () => Promise<{ killedAt: number; readyAt: number }>;
}): Promise<RolloutOutcome> {
  const { db, facts } = input;
  const system = { type: "system" as const, id: "bench-rollout" };
  const strategy = rolloutStrategySchema.parse({
    batches: Array.from({ length: BATCHES - 1 }, () => ({ percent: 100 / BATCHES })),
    defaults: { successThreshold: 100, timeoutSeconds: NODE_TIMEOUT_SECONDS, offline: "skip" },
    onBatchFailure: "pause",
  });
  const rolloutId = await db.$transaction(
    (tx) =>
      insertRollout(tx, {
        organizationId: input.organizationId,
        appId: input.appId,
        appVersionId: input.versionId,
        selector: "bench=rollout",
        siteIds: [],
        strategy,
        versionLabel: input.versionLabel,
        actor: system,
      }),
    // Prisma's default 5 s is too short on a loaded machine (seen: 15 s at 10,000 nodes).
    { maxWait: 15_000, timeout: 120_000 },
  );
  const varzBefore = await serverTraffic(input.monitorUrl);
  const agentBytesBefore = await connectionBytes(input.monitorUrl, `${NAME_PREFIX}-`);
  const startedAt = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const started = await db.$transaction(
    (tx) => actOnRollout(tx, input.organizationId, rolloutId, { type: "start" }, system),
    { maxWait: 15_000, timeout: 300_000 },
  );
  if (!started.ok) throw new Error(`the rollout did not start: ${JSON.stringify(started)}`);

  const progress = new Progress(input.killBatch === null ? "rollout" : "rollout+kill", input.nodes);
  const deadline = Math.min(input.deadline, startedAt + Math.max(1_200_000, input.nodes * 400));
  const batchSize = input.nodes / BATCHES;
  let kill: KillMeasurement | null = null;
  let status = "running";
  let finishedAt: number | null = null;
  while (Date.now() < deadline) {
    const [running, rollout] = await Promise.all([
      facts.runningCount(input.appId, input.versionId),
      facts.rollout(rolloutId),
    ]);
    status = rollout.status;
    progress.update(running, `batch ${rollout.batchesStarted}/${BATCHES}, ${status}`);
    if (rollout.finishedAt !== null || !["running", "pending"].includes(status)) {
      finishedAt = status === "completed" ? rollout.finishedAt : null;
      break;
    }
    const killNow =
      input.killBatch !== null &&
      kill === null &&
      rollout.batchesStarted === input.killBatch + 1 &&
      running >= (input.killBatch + 0.4) * batchSize;
    if (killNow && input.killBatch !== null) {
      kill = await killAndRestart(
        input,
        rolloutId,
        startedAt,
        running - input.killBatch * batchSize,
        batchSize,
      );
      continue;
    }
    await sleep(input.killBatch !== null && kill === null ? 100 : 500);
  }
  progress.finish(
    finishedAt === null
      ? `not completed (status ${status})`
      : `completed in ${((finishedAt - startedAt) / 1000).toFixed(1)} s`,
  );
  if (input.killBatch !== null && kill === null)
    process.stdout.write("  ! the batch went by before the kill could land: no kill measured\n");
  // Status reports of the last nodes (and their triggers) are in by now; read every fact.
  return {
    startedAt,
    finishedAt,
    status,
    facts: await facts.since(startedAt - 1_000),
    kill,
    varzBefore,
    agentBytesBefore,
    loadAverage: [loadAtStart, loadavg()[0] ?? 0],
  };
}

async function killAndRestart(
  input: Parameters<typeof runRollout>[0],
  rolloutId: string,
  startedAt: number,
  batchRunning: number,
  batchSize: number,
): Promise<KillMeasurement> {
  const oldOwner = await input.facts.leaseOwner(rolloutId);
  step(`kill -9 of the gateway (lease owner ${oldOwner ?? "none"}), restarting it at once`);
  const { killedAt, readyAt } = await input.restartGateway();
  // The new controller owns the rollout once the dead replica's lease ran out.
  let tookOverAt: number | null = null;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const owner = await input.facts.leaseOwner(rolloutId);
    if (owner !== null && owner !== oldOwner) {
      tookOverAt = Date.now();
      break;
    }
    await sleep(50);
  }
  const firstEvent = await input.facts.firstEventSince(rolloutId, killedAt);
  step(
    `gateway ready ${((readyAt - killedAt) / 1000).toFixed(1)} s after the kill; lease taken over after ${tookOverAt === null ? "–" : ((tookOverAt - killedAt) / 1000).toFixed(1)} s`,
  );
  return {
    batch: input.killBatch ?? 0,
    atSeconds: (killedAt - startedAt) / 1000,
    batchRunningAtKill: Math.round(batchRunning),
    batchNodes: Math.round(batchSize),
    gatewayReadySeconds: (readyAt - killedAt) / 1000,
    resumeSeconds: tookOverAt === null ? null : (tookOverAt - killedAt) / 1000,
    resumeEvent: firstEvent?.kind ?? null,
    leaseMs: LEASE_MS,
  };
}

function printRun(run: RolloutRun): void {
  const row = (what: string, value: string) => process.stdout.write(`  ${what.padEnd(34)} ${value}\n`);
  const ms = (value: number) => `${Math.round(value)} ms`;
  for (const batch of run.batches)
    row(
      `batch ${batch.batch === null ? "late" : batch.batch + 1} (${batch.nodes} nodes)`,
      `commit ${ms(batch.commitMs)}, ${batch.toRunning ? `p50 ${ms(batch.toRunning.p50)}, p99 ${ms(batch.toRunning.p99)}` : "none running"}`,
    );
  row(
    "wall time",
    run.wallSeconds === null ? `not completed (${run.status})` : `${run.wallSeconds.toFixed(1)} s`,
  );
  row("controller (gateway) CPU", `${run.controllerCpuSeconds.toFixed(1)} CPU-s`);
  row(
    "hub out / to agents",
    `${(run.hub.outBytes / 1024 ** 2).toFixed(1)} / ${(run.hub.toAgentsBytes / 1024 ** 2).toFixed(1)} MiB`,
  );
  row("updated twice / left behind", `${run.updatedTwice.nodes} / ${run.leftBehind}`);
  if (run.kill)
    row(
      "time to resume",
      run.kill.resumeSeconds === null ? "did not resume" : `${run.kill.resumeSeconds.toFixed(1)} s`,
    );
}

async function writeReport(results: RolloutBenchResults, outDir: string): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  const charts = await writeRolloutCharts(results, outDir);
  writeFileSync(join(outDir, "rollout-results.json"), `${JSON.stringify(results, null, 2)}\n`);
  const reportFile = join(outDir, "rollout.md");
  writeFileSync(reportFile, renderRolloutReport(results, charts));
  return reportFile;
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`bench:rollout: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `bench:rollout failed: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
  );
  process.exit(1);
});

/** Node flags that make the gateway write a V8 CPU profile into `dir` when it exits. */
function cpuProfileArgs(dir: string | undefined): string[] {
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
}
