/**
 * The gates scenario (issue 11, Measure (a)): one stack, one enrolled hollow fleet, then a series
 * of rollouts with metric gates, each judged by the gateway's own controller on Mimir. Per version
 * the workers are told what it does (behaviour.ts); the product decides the rest. See
 * packages/bench/README.md, "Metric gates".
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join, relative, resolve } from "node:path";
import { createEnrollmentToken, createPrismaClient, type Db, setDesiredAppsForNodes } from "@edgefleet/db";
import { rolloutStrategySchema } from "@edgefleet/rollout";
import {
  actOnRollout,
  insertRollout,
  loadGateVerdicts,
  type StoredGateVerdict,
} from "@edgefleet/rollout-store";
import { type Cleanup, runWithCleanup } from "../../interrupt.js";
import { describeMachine, gitCommit } from "../../machine.js";
import { PgEvents } from "../../pg-events.js";
import { ProcSampler, usageByPhase } from "../../proc.js";
import { Progress, step } from "../../progress.js";
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
  stackUpRetrying,
} from "../../stack.js";
import { WorkerPool } from "../../workers.js";
import { type BehaviourTable, goodRelease, HARDWARE, hardwareSplit, nodeName } from "./behaviour.js";
import { caughtUp, type IngestSample, sampleIngest } from "./ingest.js";
import { type GatesResults, RESULTS, writeGatesReport } from "./report.js";
import {
  type BatchRecord,
  type GateNumbers,
  gatesStrategy,
  type PlannedRun,
  planRuns,
  type RunRecord,
  type RunStatus,
  runOutcome,
  summarizeRuns,
} from "./scenario.js";

export interface GatesOptions {
  nodes: number;
  goodRuns: number;
  windowSeconds: number;
  metricsIntervalSeconds: number;
  canaryPercent: number;
  secondPercent: number;
  hollowProcesses: number;
  settleSeconds: number;
  /** Before each run, wait at most this long for the gateway's metrics to catch up. */
  catchUpSeconds: number;
  maxMinutes: number;
  outDir: string;
  notes: string[];
  renderOnly: boolean;
  command: string;
}

const NAME_PREFIX = "gates";
const APP = "bench-app";
const SELECTOR = "bench=gates";
/** A run that has not stopped moving by then is reported as timed out. */
const RUN_TIMEOUT_MS = 15 * 60_000;
/** How often a run samples the metrics lag (ingest.ts). */
const INGEST_SAMPLE_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const system = { type: "system" as const, id: "bench-gates" };

export async function runGatesBench(options: GatesOptions): Promise<void> {
  const outDir = resolve(REPO_ROOT, options.outDir);
  if (options.renderOnly) {
    const results = JSON.parse(readFileSync(join(outDir, RESULTS), "utf8")) as GatesResults;
    // The summary again from the runs: a report written by newer code has the same inputs.
    const summary = summarizeRuns(results.runs, results.fleet.enrolled);
    await writeGatesReport({ ...results, summary, notes: [...results.notes, ...options.notes] }, outDir);
    return;
  }
  await runWithCleanup((cleanup) => run(options, outDir, cleanup));
}

async function run(options: GatesOptions, outDir: string, cleanup: Cleanup): Promise<void> {
  const scenarioStart = Date.now();
  const deadline = scenarioStart + options.maxMinutes * 60_000;
  const problems: string[] = [];
  if (benchStackRunning())
    throw new Error(
      `a ${PROFILE} stack is already running; stop it first: EDGEFLEET_PROFILE=${PROFILE} ./edgefleet down`,
    );
  step(`starting the ${PROFILE} stack without Keycloak (logs in ${relative(REPO_ROOT, LOG_DIR)})`);
  const stackStarting = stackUpRetrying();
  cleanup.add("stack down", async () => {
    await stackStarting.catch(() => undefined);
    step(`stopping the ${PROFILE} stack`);
    await stackDown();
  });
  const env = await stackStarting;
  const need = (name: string) => {
    const value = env[name];
    if (!value) throw new Error(`var/${PROFILE}/stack.env has no ${name}`);
    return value;
  };
  migrate(env);
  const events = await PgEvents.open(need("DATABASE_URL"));
  cleanup.add("close Postgres (events)", () => events.close());
  const db: Db = createPrismaClient(need("DATABASE_URL"));
  cleanup.add("close Prisma", () => db.$disconnect());

  const gateway = await GatewayProcess.start(env, {
    GATEWAY_METRICS_INTERVAL_S: String(options.metricsIntervalSeconds),
  });
  cleanup.add("stop the gateway", () => gateway.stop());
  step(`gateway ready at ${gateway.url} (agents report metrics every ${options.metricsIntervalSeconds} s)`);

  let pool: WorkerPool | undefined;
  const sampler = new ProcSampler(() => ({
    "nats-server": { roots: [pidOf("nats") ?? 0], tree: true },
    gateway: { roots: [gateway.child.pid ?? 0], tree: true },
    postgres: { roots: [postgresPid() ?? 0], tree: true },
    mimir: { roots: [pidOf("mimir") ?? 0], tree: true },
    "hollow agents": { roots: pool?.pids() ?? [], tree: false },
  }));
  sampler.start();
  cleanup.add("stop sampling", () => sampler.stop());

  const organization = await db.organization.create({
    data: { slug: `bench-gates-${Date.now()}`, name: "Metric gates benchmark" },
  });
  const app = await db.app.create({ data: { organizationId: organization.id, name: APP } });
  const versionIds = new Map<string, string>();
  const createVersion = async (label: string) => {
    const row = await db.appVersion.create({
      data: {
        organizationId: organization.id,
        appId: app.id,
        version: label,
        // The hollow runtime simulates pulls: the artifact is never fetched (gates judge what runs).
        artifactSource: "upload",
        artifactState: "ready",
        artifactSha256: Buffer.from(label.padEnd(32, "\0")).subarray(0, 32).toString("hex"),
        artifactSize: 1_048_576n,
        runSpec: { command: ["./svc"] },
      },
    });
    versionIds.set(label, row.id);
    return row.id;
  };

  // --- the fleet: pi4s and nucs, enrolled and connected once for every run ----------------------
  sampler.phase = "enroll";
  step(`forking ${options.hollowProcesses} hollow-agent processes`);
  pool = await WorkerPool.start(options.hollowProcesses, LOG_DIR);
  const workers = pool;
  cleanup.add("stop the hollow agents", () => workers.stop());
  const split = hardwareSplit(options.nodes);
  const enrollProgress = new Progress("enroll", options.nodes);
  const enrollTicker = setInterval(() => enrollProgress.update(workers.totals().enrolled), 500);
  const enrollStart = Date.now();
  const nids = new Set<string>();
  let enrollFailures = 0;
  try {
    for (const hardware of HARDWARE) {
      if (split[hardware] === 0) continue;
      const { token } = await createEnrollmentToken(db, organization.id, {
        expiresAt: new Date(Date.now() + 12 * 3_600_000),
        maxUses: split[hardware],
        labels: { bench: "gates", hw: hardware },
        description: `benchmark: hollow ${hardware} nodes for metric gates`,
      });
      const enrolled = await workers.enroll(split[hardware], {
        token,
        natsUrl: need("NATS_URL"),
        enrollCreds: await readFile(need("NATS_ENROLL_CREDS"), "utf8"),
        namePrefix: nodeName(NAME_PREFIX, hardware),
        concurrency: 16,
        appModels: true,
      });
      for (const node of enrolled.nodes) nids.add(node.nid);
      enrollFailures += enrolled.failures;
    }
  } finally {
    clearInterval(enrollTicker);
  }
  const enrollSeconds = (Date.now() - enrollStart) / 1000;
  enrollProgress.finish(`${nids.size} nodes in ${enrollSeconds.toFixed(0)} s`);
  if (enrollFailures > 0) problems.push(`${enrollFailures} of ${options.nodes} enrollments failed.`);

  sampler.phase = "connect";
  const connectStart = Date.now();
  const onlineProgress = new Progress("online", nids.size);
  const starting = workers.connect(200, 32);
  let online = 0;
  while (Date.now() < connectStart + 600_000) {
    online = await events.countSince("node:online", connectStart);
    onlineProgress.update(online);
    if (online >= nids.size) break;
    await sleep(1_000);
  }
  await starting;
  onlineProgress.finish(`${online} online after ${((Date.now() - connectStart) / 1000).toFixed(0)} s`);
  if (online < nids.size) problems.push(`${nids.size - online} nodes never came online.`);

  // --- the first version everywhere: the first baseline ------------------------------------------
  sampler.phase = "install";
  const firstLabel = "2.0.0";
  const firstId = await createVersion(firstLabel);
  const table: BehaviourTable = { [firstLabel]: { kind: "good", scale: 1 } };
  await workers.setBehaviours(table);
  const nodeIds = (
    await db.node.findMany({ where: { organizationId: organization.id }, select: { id: true } })
  ).map((n) => n.id);
  await setDesiredAppsForNodes(db, organization.id, nodeIds, { put: [firstId] });
  const installProgress = new Progress(`on ${firstLabel}`, nodeIds.length);
  let installed = 0;
  while (Date.now() < deadline) {
    installed = await runningOn(db, organization.id, firstId);
    installProgress.update(installed);
    if (installed >= nodeIds.length) break;
    await sleep(1_000);
  }
  installProgress.finish(`${installed} running ${firstLabel}`);
  // The first canary needs a baseline with a full window of samples.
  const warmup = options.windowSeconds + 2 * options.metricsIntervalSeconds;
  step(`waiting ${warmup} s for a window of per-app samples in Mimir`);
  await sleep(warmup * 1000);

  // --- the runs ----------------------------------------------------------------------------------
  const strategy = rolloutStrategySchema.parse(
    gatesStrategy({
      nodes: nodeIds.length,
      canaryPercent: options.canaryPercent,
      secondPercent: options.secondPercent,
      windowSeconds: options.windowSeconds,
    }),
  );
  const plan = planRuns(options.goodRuns);
  const ingest = () =>
    sampleIngest({
      monitorUrl: need("NATS_MONITOR_URL"),
      mimirUrl: need("MIMIR_URL"),
      organizationId: organization.id,
      app: APP,
    });
  const runs: RunRecord[] = [];
  for (const planned of plan) {
    if (Date.now() >= deadline) {
      problems.push(`--max-minutes reached: runs ${planned.run}–${plan.length} were not run.`);
      break;
    }
    sampler.phase = planned.kind === "good" ? "good runs" : planned.kind;
    const caughtUpAt = await waitForIngest(
      ingest,
      3 * options.metricsIntervalSeconds,
      options.catchUpSeconds,
    );
    const behaviour = planned.kind === "good" ? goodRelease() : { kind: planned.kind, scale: 1 };
    table[planned.label] = behaviour;
    await workers.setBehaviours(table);
    const record = await rollOut(db, workers, organization.id, app.id, planned, behaviour, {
      versionId: await createVersion(planned.label),
      strategy,
      fleet: nodeIds.length,
      ingest,
      caughtUp: caughtUpAt,
    });
    runs.push(record);
    printRun(record, nodeIds.length);
    if (record.status === "timed_out") {
      problems.push(
        `run ${planned.run} (${planned.label}) did not stop moving within ${RUN_TIMEOUT_MS / 60_000} min.`,
      );
      break;
    }
    await sleep(options.settleSeconds * 1000);
  }

  sampler.sample();
  sampler.stop();
  const results: GatesResults = {
    command: options.command,
    profile: PROFILE,
    commit: gitCommit(REPO_ROOT),
    machine: describeMachine(),
    at: new Date(scenarioStart).toISOString(),
    loadAverage: loadavg().map((v) => Math.round(v * 100) / 100),
    config: {
      nodes: options.nodes,
      hardware: split,
      goodRuns: options.goodRuns,
      windowSeconds: options.windowSeconds,
      metricsIntervalSeconds: options.metricsIntervalSeconds,
      canaryPercent: options.canaryPercent,
      secondPercent: options.secondPercent,
      hollowProcesses: options.hollowProcesses,
      settleSeconds: options.settleSeconds,
      catchUpSeconds: options.catchUpSeconds,
      strategy,
    },
    fleet: { enrolled: nids.size, online, enrollSeconds },
    scenarioSeconds: (Date.now() - scenarioStart) / 1000,
    runs,
    summary: summarizeRuns(runs, nodeIds.length),
    usage: usageByPhase(sampler.samples).filter((entry) => entry.phase !== "start"),
    problems,
    notes: options.notes,
  };
  await writeGatesReport(results, outDir);
  for (const problem of problems) process.stdout.write(`  ! ${problem}\n`);
  step(`scenario took ${(results.scenarioSeconds / 60).toFixed(1)} min`);
}

function runningOn(db: Db, organizationId: string, versionId: string): Promise<number> {
  return db.appInstance.count({ where: { organizationId, observedVersionId: versionId, state: "running" } });
}

const MOVING: ReadonlySet<string> = new Set(["pending", "running", "rolling_back"]);

/** One rollout, started as a person does and driven by the gateway's controller until it stops moving. */
async function rollOut(
  db: Db,
  workers: WorkerPool,
  organizationId: string,
  appId: string,
  planned: PlannedRun,
  behaviour: RunRecord["behaviour"],
  input: {
    versionId: string;
    strategy: ReturnType<typeof rolloutStrategySchema.parse>;
    fleet: number;
    ingest: () => Promise<IngestSample>;
    caughtUp: { waitedSeconds: number; sample: IngestSample };
  },
): Promise<RunRecord> {
  step(
    `run ${planned.run}: ${planned.label} (${planned.kind}${planned.kind === "good" ? `, ×${behaviour.scale.toFixed(3)}` : ""})`,
  );
  const loadAtStart = loadavg()[0] ?? 0;
  const startedAt = Date.now();
  const rolloutId = await db.$transaction(
    async (tx) => {
      const id = await insertRollout(tx, {
        organizationId,
        appId,
        appVersionId: input.versionId,
        selector: SELECTOR,
        siteIds: [],
        strategy: input.strategy,
        versionLabel: planned.label,
        actor: system,
      });
      const started = await actOnRollout(tx, organizationId, id, { type: "start" }, system);
      if (!started.ok) throw new Error(`the rollout did not start: ${JSON.stringify(started)}`);
      return id;
    },
    { maxWait: 15_000, timeout: 300_000 },
  );
  const progress = new Progress(planned.label, input.fleet);
  let status: RunStatus = "timed_out";
  let statusReason: string | null = null;
  const ingestSamples: IngestSample[] = [input.caughtUp.sample];
  let lastIngest = 0;
  while (Date.now() < startedAt + RUN_TIMEOUT_MS) {
    if (Date.now() - lastIngest >= INGEST_SAMPLE_MS) {
      lastIngest = Date.now();
      ingestSamples.push(await input.ingest());
    }
    const [row, dispatched] = await Promise.all([
      db.rollout.findUniqueOrThrow({
        where: { id: rolloutId },
        select: { status: true, statusReason: true },
      }),
      db.rolloutNode.count({ where: { rolloutId, dispatchedAt: { not: null } } }),
    ]);
    progress.update(dispatched, row.status);
    if (!MOVING.has(row.status)) {
      status = row.status as RunStatus;
      statusReason = row.statusReason;
      break;
    }
    await sleep(1_000);
  }
  const settledAt = Date.now();
  progress.finish(`${status}${statusReason ? `: ${statusReason.slice(0, 160)}` : ""}`);

  let resetByBenchmark = false;
  if (status === "failed") {
    // Paused for a person (an inconclusive gate): the benchmark rolls it back to reset the fleet.
    resetByBenchmark = true;
    const back = await db.$transaction(
      (tx) =>
        actOnRollout(tx, organizationId, rolloutId, { type: "rollback", note: "benchmark reset" }, system),
      { maxWait: 15_000, timeout: 120_000 },
    );
    if (!back.ok) throw new Error(`could not roll back the paused rollout: ${JSON.stringify(back)}`);
  }
  if (status !== "completed" && status !== "timed_out") {
    const until = Date.now() + RUN_TIMEOUT_MS;
    while (Date.now() < until) {
      const row = await db.rollout.findUniqueOrThrow({ where: { id: rolloutId }, select: { status: true } });
      if (!MOVING.has(row.status)) break;
      await sleep(1_000);
    }
  }
  const switches = await workers.updates();
  return {
    ...planned,
    behaviour,
    status,
    statusReason,
    batches: await batchRecords(db, organizationId, rolloutId),
    reached: {
      dispatched: await db.rolloutNode.count({ where: { rolloutId, dispatchedAt: { not: null } } }),
      ran: switches.filter((node) => (node.switches[planned.label] ?? 0) > 0).length,
    },
    resetByBenchmark,
    ingest: { waitedSeconds: input.caughtUp.waitedSeconds, samples: ingestSamples },
    startedAt,
    settledAt,
    loadAverage: [loadAtStart, loadavg()[0] ?? 0],
  };
}

/**
 * Waits until the newest per-app sample in Mimir is at most `maxLagSeconds` old, or `timeoutSeconds`
 * passed: a run starts once the product has taken in the previous one's reports (a rollout's status
 * burst puts the gateway behind), so that each run's gates see the same thing.
 */
async function waitForIngest(
  ingest: () => Promise<IngestSample>,
  maxLagSeconds: number,
  timeoutSeconds: number,
): Promise<{ waitedSeconds: number; sample: IngestSample }> {
  const start = Date.now();
  let sample = await ingest();
  if (caughtUp(sample, maxLagSeconds)) return { waitedSeconds: 0, sample };
  const progress = new Progress("metrics lag", 1);
  while (!caughtUp(sample, maxLagSeconds) && Date.now() - start < timeoutSeconds * 1000) {
    progress.update(
      0,
      `newest sample ${sample.lagSeconds?.toFixed(0) ?? "?"} s old, backlog ${sample.backlog ?? "?"}`,
    );
    await sleep(2_000);
    sample = await ingest();
  }
  const waitedSeconds = (Date.now() - start) / 1000;
  progress.finish(
    `caught up to ${sample.lagSeconds?.toFixed(0) ?? "?"} s after ${waitedSeconds.toFixed(0)} s`,
  );
  return { waitedSeconds, sample };
}

async function batchRecords(db: Db, organizationId: string, rolloutId: string): Promise<BatchRecord[]> {
  const dispatches = await db.$queryRaw<
    Array<{ batch: number | null; nodes: bigint; first: Date | null; last: Date | null }>
  >`SELECT dispatch_batch AS batch, count(*) AS nodes, min(dispatched_at) AS first, max(dispatched_at) AS last
    FROM rollout_node WHERE rollout_id = ${rolloutId}::uuid AND dispatched_at IS NOT NULL AND NOT catch_up
    GROUP BY dispatch_batch ORDER BY dispatch_batch`;
  const verdicts = await loadGateVerdicts(db, organizationId, rolloutId);
  const batches = new Set([
    ...dispatches.flatMap((d) => (d.batch === null ? [] : [d.batch])),
    ...verdicts.map((v) => v.batch),
  ]);
  return [...batches]
    .sort((a, b) => a - b)
    .map((batch) => {
      const dispatch = dispatches.find((d) => d.batch === batch);
      const verdict = verdicts.find((v) => v.batch === batch);
      return {
        batch,
        dispatched: Number(dispatch?.nodes ?? 0),
        firstDispatchAt: dispatch?.first?.getTime() ?? null,
        lastDispatchAt: dispatch?.last?.getTime() ?? null,
        gates: verdict
          ? {
              outcome: verdict.outcome,
              windowStart: new Date(verdict.windowStart).getTime(),
              windowEnd: new Date(verdict.windowEnd).getTime(),
              evaluatedAt: new Date(verdict.evaluatedAt).getTime(),
              gates: verdict.gates.map(gateNumbers),
            }
          : null,
      };
    });
}

function gateNumbers(gate: StoredGateVerdict): GateNumbers {
  return {
    gate: gate.gate,
    outcome: gate.outcome,
    reason: gate.reason,
    canary: { nodes: gate.canary.nodes, median: gate.canary.median },
    baseline: { nodes: gate.baseline.nodes, median: gate.baseline.median },
    pValue: gate.compare?.pValue ?? null,
    relativeDelta: gate.compare?.relativeDelta ?? null,
    breaching: gate.threshold ? gate.threshold.breaching.length : null,
  };
}

function printRun(run: RunRecord, fleet: number): void {
  const outcome = runOutcome(run);
  const line = (what: string, value: string) => process.stdout.write(`  ${what.padEnd(28)} ${value}\n`);
  for (const batch of run.batches) {
    const gates = batch.gates?.gates
      .map(
        (g) =>
          `${g.gate} ${g.outcome}${g.pValue !== null ? ` p=${g.pValue.toPrecision(2)}` : ""}${g.relativeDelta !== null ? ` Δ=${(g.relativeDelta * 100).toFixed(0)}%` : ""}${g.breaching !== null ? ` out=${g.breaching}` : ""}`,
      )
      .join(", ");
    line(
      `batch ${batch.batch + 1} (${batch.dispatched} nodes)`,
      gates ? `${batch.gates?.outcome}: ${gates}` : "no gates",
    );
  }
  line(
    "outcome",
    outcome.stopped
      ? `stopped in batch ${outcome.stoppedAtBatch} by ${outcome.stoppedBy}, ${outcome.action}`
      : `${run.status}`,
  );
  line("reached", `${run.reached.dispatched} dispatched, ${run.reached.ran} ran it (of ${fleet})`);
  line(
    "took",
    `${((run.settledAt - run.startedAt) / 1000).toFixed(0)} s, load ${run.loadAverage.map((l) => l.toFixed(1)).join(" → ")}`,
  );
}
