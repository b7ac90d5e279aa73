/**
 * pnpm bench:scale [--nodes 100000] [--sites 50] [--apps-per-node 10] [--idle-seconds 180]
 *                  [--churn-period 300] [--churn-cycles 3] [--generator go|node]
 *                  [--go-sample 1000] [--max-minutes 240] [--out docs/benchmarks]
 *
 * The scale scenario (issue 16): N sites, each a real leaf nats-server configured by the site leaf
 * bundle, M hollow nodes spread over them with 10 apps each, against the `scale` stack profile.
 * The nodes are simulated by the native agent's hollow mode (`--generator go`, the default: a
 * third of Node's memory per node) or by agent-sdk Node workers (`--generator node`, which also
 * measures a `--go-sample` of the native mode beside them).
 * Phases: enrollment, connect, idle (cost per node, gateway CPU profile), rollout of one app in
 * batches, hub restart, one leaf restart, churn. Writes docs/benchmarks/scale.md with charts and
 * scale-results.json. Loopback only; stops everything it started on success, failure and Ctrl-C.
 */
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join, relative } from "node:path";
import { createEnrollmentToken, createPrismaClient, type Db, setDesiredAppsForNodes } from "@edgefleet/db";
import { rolloutStrategySchema } from "@edgefleet/rollout";
import { actOnRollout, insertRollout } from "@edgefleet/rollout-store";
import pg from "pg";
import { type Cleanup, runWithCleanup } from "../interrupt.js";
import { writeLeafBundle } from "../leaf-bundle.js";
import { livenessBound } from "../liveness.js";
import { describeMachine, gitCommit } from "../machine.js";
import { serverVersion } from "../nats-monitor.js";
import { latenciesFrom, PgEvents } from "../pg-events.js";
import { latestUsageLine, ProcSampler, usageByPhase } from "../proc.js";
import { Progress, step } from "../progress.js";
import { percentileCurve } from "../results.js";
import { RolloutFacts } from "../rollout/instrumentation.js";
import { allLatencies } from "../rollout/measure.js";
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
  stackUpRetrying,
  VAR_DIR,
} from "../stack.js";
import { cumulativeSeries, ratePerSecond, spreadSample, summarize } from "../stats.js";
import { WorkerPool } from "../workers.js";
import { type ApiPhaseResult, measureApiDuring, scaleApiCases, startScaleConsole } from "./api-slo.js";
import { type CpuProfile, summarizeProfile } from "./cpu-profile.js";
import { buildNativeAgent, type GeneratorCost, measureGoHollow } from "./go-hollow.js";
import { summarizeGoHeap, summarizeGoProfile, takeGoCpuProfile, takeGoHeapProfile } from "./go-profile.js";
import {
  goMemoryEnv,
  goMemoryLimit,
  hubLeafCount,
  killLeaves,
  type SiteLeaf,
  startLeaf,
  stopLeaf,
} from "./leaves.js";
import { churnSample, componentCosts, costPerNode, memorySlopes, nodeIndexOf } from "./measure.js";
import { HelpRequested, readScaleOptions, type ScaleOptions, UsageError } from "./options.js";
import { writeScaleReport } from "./report.js";
import type { ProfilePair, ScaleResults } from "./results.js";

const RESULTS_FILE = join(REPO_ROOT, "var", PROFILE, "scale-results.json");
/** Every resource sample of the last run, written however it ends (a stopped run has no report). */
const TIMELINE_FILE = join(REPO_ROOT, "var", PROFILE, "scale-timeline.json");
/** How often the CPU and memory of every component are printed while the run goes on. */
const USAGE_LINE_MS = 60_000;
/**
 * GOMEMLIMIT per node of a site leaf and of a Go generator process (goMemoryLimit, with GOGC=50):
 * a site box holds one leaf, but here fifty share the machine with 100,000 simulated nodes and the
 * control plane. An idle leaf of 2,000 nodes holds 37 KiB of heap and 28 KiB of goroutine stacks per
 * node (67 KiB RSS); at 96 KiB the leaves of a 100,000 attempt grew to 92 KB per node while nodes
 * connected, which with the generators' ~100 KB left the machine out of memory at 92,700 nodes.
 * A generator holds ~88 KiB per node idle (nats.go's 32 KiB read buffer per connection the most).
 */
const LEAF_KIB_PER_NODE = 80;
const GENERATOR_KIB_PER_NODE = 140;
/** How long the leaf restart watches for reconnects (its site's agents back well within it). */
const LEAF_WATCH_MS = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  if (PROFILE !== "scale")
    throw new UsageError("run it as `pnpm bench:scale` (sets EDGEFLEET_BENCH_PROFILE=scale)");
  const options = readScaleOptions(process.argv.slice(2));
  const command = ["pnpm bench:scale", ...process.argv.slice(2)].join(" ");
  if (options.renderOnly) {
    const results = JSON.parse(readFileSync(RESULTS_FILE, "utf8")) as ScaleResults;
    const report = await writeScaleReport(
      { ...results, notes: [...results.notes, ...options.notes] },
      options.outDir,
    );
    step(`report: ${relative(REPO_ROOT, report)}`);
    return;
  }
  await runWithCleanup((cleanup) => run(options, command, cleanup));
}

/** Polls `count` until it reaches `total` or `timeoutMs` passes; returns the last count. */
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
    await sleep(1_000);
  }
  return done;
}

async function run(options: ScaleOptions, command: string, cleanup: Cleanup): Promise<void> {
  const runDeadline = Date.now() + options.maxMinutes * 60_000;
  const remaining = (wanted: number) => Math.max(5_000, Math.min(wanted, runDeadline - Date.now()));
  const problems: string[] = [];
  /** A later phase that fails is reported, and the run goes on to the next one and the report. */
  const phase = async (name: string, body: () => Promise<void>) => {
    try {
      await body();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      problems.push(`The ${name} phase failed: ${message}`);
      step(`${name} failed: ${message}`);
    }
  };
  const loadAtStart = loadavg();
  if (benchStackRunning())
    throw new UsageError(
      "a scale stack is already running; stop it with: EDGEFLEET_PROFILE=scale bash scripts/stack/down.sh",
    );
  step(`starting the ${PROFILE} stack (Postgres, NATS hub, Mimir; logs in ${relative(REPO_ROOT, LOG_DIR)})`);
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
  const monitorUrl = need("NATS_MONITOR_URL");
  migrate(env);
  const events = await PgEvents.open(need("DATABASE_URL"));
  cleanup.add("close Postgres", () => events.close());
  const facts = await RolloutFacts.open(need("DATABASE_URL"));
  cleanup.add("close Postgres (rollout facts)", () => facts.close());
  const sql = new pg.Client({ connectionString: need("DATABASE_URL") });
  await sql.connect();
  cleanup.add("close Postgres (queries)", () => sql.end());
  const db: Db = createPrismaClient(need("DATABASE_URL"));
  cleanup.add("close Prisma", () => db.$disconnect());

  const gatewayEnv = {
    GATEWAY_HEARTBEAT_INTERVAL_S: String(options.heartbeatSeconds),
    GATEWAY_METRICS_INTERVAL_S: String(options.metricsSeconds),
  };
  const gateway = await GatewayProcess.start(env, gatewayEnv);
  cleanup.add("stop the gateway", () => gateway.stop());
  step(`gateway ready at ${gateway.url}`);

  // --- sites: one leaf nats-server each, from the site leaf bundle ------------------------------
  const organization = await db.organization.create({ data: { slug: `scale-${Date.now()}`, name: "Scale" } });
  const leafDir = join(VAR_DIR, "leaves");
  rmSync(leafDir, { recursive: true, force: true });
  const leafPortBase = Number(new URL(need("NATS_URL")).port) + 8; // 4230 + offset, as the demo's leaves
  // One leaf runs with the Go profiler (prof_port), so the report can say where a leaf's CPU goes.
  // Not the first: that one is restarted in the leaf-restart phase.
  const profiledLeaf = Math.min(1, options.sites - 1);
  const leafProfileUrl = `http://127.0.0.1:${leafPortBase + 900}`;
  const leaves: SiteLeaf[] = [];
  cleanup.add("stop the site leaves", async () => {
    await Promise.all(leaves.map((leaf) => stopLeaf(leaf, 5_000)));
    killLeaves(leaves);
  });
  const memoryLimits = {
    leaf: goMemoryLimit(Math.ceil(options.nodes / options.sites), LEAF_KIB_PER_NODE),
    generator:
      options.generator === "go"
        ? goMemoryLimit(Math.ceil(options.nodes / options.hollowProcesses), GENERATOR_KIB_PER_NODE)
        : null,
  };
  const leafProgress = new Progress("leaves", options.sites);
  for (let index = 0; index < options.sites; index++) {
    const name = `site-${String(index).padStart(3, "0")}`;
    const site = await db.site.create({ data: { organizationId: organization.id, name } });
    const port = leafPortBase + index;
    const { configPath } = await writeLeafBundle({
      gatewayUrl: gateway.url,
      internalToken: need("GATEWAY_INTERNAL_TOKEN"),
      organizationId: organization.id,
      siteId: site.id,
      name,
      port,
      dir: leafDir,
    });
    if (index === profiledLeaf)
      appendFileSync(
        configPath,
        `\n# The scale bench profiles this leaf.\nprof_port: ${new URL(leafProfileUrl).port}\n`,
      );
    const leaf: SiteLeaf = {
      index,
      siteId: site.id,
      name,
      port,
      url: `nats://127.0.0.1:${port}`,
      configPath,
      child: undefined,
    };
    leaves.push(leaf);
    await startLeaf(leaf, need("NATS_SERVER_BIN"), LOG_DIR, memoryLimits.leaf);
    leafProgress.update(index + 1, name);
  }
  const leavesUp = await waitUntil(new Progress("leafz", options.sites), options.sites, 60_000, () =>
    hubLeafCount(monitorUrl),
  );
  leafProgress.finish(`${leaves.length} leaf nats-servers; the hub holds ${leavesUp} leaf connections`);
  if (leavesUp < options.sites)
    problems.push(`Only ${leavesUp} of ${options.sites} leaves connected to the hub.`);

  // The console, for the API SLI (started before the baseline, so its build's CPU is not the fleet's).
  let consoleApi: Awaited<ReturnType<typeof startScaleConsole>> | undefined;
  if (options.apiSeconds > 0)
    await phase("console start", async () => {
      step("starting the console (production build of HEAD, reused while its sources are unchanged)");
      consoleApi = await startScaleConsole({
        db,
        organizationId: organization.id,
        stackEnv: env,
        logDir: LOG_DIR,
        say: (text) => step(`  ${text}`),
      });
      cleanup.add("stop the console", () => consoleApi?.web.stop());
      step(`console ready at ${consoleApi.web.url}`);
    });

  let pool: WorkerPool | undefined;
  let goGenerator: number | undefined;
  const generatorComponent = options.generator === "go" ? "hollow agents (Go)" : "hollow agents (Node)";
  const sampler = new ProcSampler(() => ({
    "nats-server (hub)": { roots: [pidOf("nats") ?? 0], tree: true },
    gateway: { roots: [gateway.child.pid ?? 0], tree: true },
    postgres: { roots: [postgresPid() ?? 0], tree: true },
    mimir: { roots: [pidOf("mimir") ?? 0], tree: true },
    "site leaves": {
      roots: leaves.flatMap((leaf) => (leaf.child?.pid ? [leaf.child.pid] : [])),
      tree: false,
    },
    [generatorComponent]: { roots: pool?.pids() ?? [], tree: false },
    // The native hollow mode's sample beside a Node fleet (--generator node --go-sample N).
    ...(options.generator === "node"
      ? { "hollow agents (Go sample)": { roots: goGenerator ? [goGenerator] : [], tree: false } }
      : {}),
    "console (web)": { roots: consoleApi?.web.child.pid ? [consoleApi.web.child.pid] : [], tree: true },
    "bench driver": { roots: [process.pid], tree: false },
  }));
  sampler.phase = "baseline";
  sampler.start();
  const usageLine = setInterval(() => step(`usage: ${latestUsageLine(sampler.samples)}`), USAGE_LINE_MS);
  usageLine.unref();
  cleanup.add("stop sampling", () => {
    clearInterval(usageLine);
    sampler.stop();
    // A run stopped early leaves no report: its timeline says where the machine's time went.
    writeFileSync(
      TIMELINE_FILE,
      JSON.stringify({ command, phases: usageByPhase(sampler.samples), samples: sampler.samples }),
    );
    step(`resource timeline: ${relative(REPO_ROOT, TIMELINE_FILE)}`);
  });
  await sleep(10_000); // the no-fleet baseline of every component

  // One token per site: a node's credentials name the site it enrolls at, and each site's leaf
  // carries only its own nodes' subjects (issue 8 #2). Node i enrolls at, and connects to, site i % sites.
  const siteTokens: string[] = [];
  for (const leaf of leaves) {
    const { token } = await createEnrollmentToken(db, organization.id, {
      expiresAt: new Date(Date.now() + 24 * 3_600_000),
      maxUses: options.nodes + options.goSample + 10,
      labels: { bench: "scale" },
      siteId: leaf.siteId,
      description: `scale scenario: hollow fleet at ${leaf.name}`,
    });
    siteTokens.push(token);
  }
  const token = siteTokens[0] ?? "";
  const apps: Array<{ app: { id: string }; version: { id: string } }> = [];
  for (let index = 0; index < options.appsPerNode; index++) {
    const app = await db.app.create({ data: { organizationId: organization.id, name: `app-${index}` } });
    const version = await db.appVersion.create({
      data: {
        organizationId: organization.id,
        appId: app.id,
        version: "1.0.0",
        artifactUrl: "builtin:sleep",
        runSpec: { command: ["sleep", "1000000"] },
      },
    });
    apps.push({ app, version });
  }

  if (options.generator === "go") {
    step(
      `starting ${options.hollowProcesses} native hollow-agent processes (edgefleet-agent hollow --control stdio)`,
    );
    pool = await WorkerPool.startGo(
      options.hollowProcesses,
      LOG_DIR,
      buildNativeAgent(REPO_ROOT),
      memoryLimits.generator ? goMemoryEnv(memoryLimits.generator) : {},
    );
  } else {
    step(`forking ${options.hollowProcesses} hollow-agent processes`);
    pool = await WorkerPool.start(options.hollowProcesses, LOG_DIR);
  }
  const workers = pool;
  cleanup.add("stop the hollow agents", () => workers.stop());

  // --- enrollment (through the hub: the enrollment account is not on the leaves) ----------------
  sampler.phase = "enroll";
  const enrollStart = Date.now();
  const enrollProgress = new Progress("enroll", options.nodes);
  const enrollTicker = setInterval(() => {
    const { enrolled } = workers.totals();
    enrollProgress.update(
      enrolled,
      `${(enrolled / Math.max(0.001, (Date.now() - enrollStart) / 1000)).toFixed(0)} nodes/s`,
    );
  }, 1_000);
  const enrolled = await workers
    .enroll(options.nodes, {
      token,
      natsUrl: need("NATS_URL"),
      agentUrls: leaves.map((leaf) => leaf.url),
      agentTokens: siteTokens,
      enrollCreds: await readFile(need("NATS_ENROLL_CREDS"), "utf8"),
      namePrefix: "scale",
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
  const siteOfNid = new Map(enrolled.nodes.map((node) => [node.nid, nodeIndexOf(node.name) % options.sites]));

  // --- desired state: every node runs appsPerNode apps (committed before the agents connect) ------
  sampler.phase = "desired";
  const desiredStart = Date.now();
  const desiredProgress = new Progress("desired", nids.length);
  for (let offset = 0; offset < nids.length; offset += 1_000) {
    const chunk = nids.slice(offset, offset + 1_000);
    await setDesiredAppsForNodes(db, organization.id, chunk, { put: apps.map(({ version }) => version.id) });
    desiredProgress.update(offset + chunk.length, `${apps.length} apps each`);
  }
  const desiredSeconds = (Date.now() - desiredStart) / 1000;
  desiredProgress.finish(
    `${nids.length * apps.length} app instances committed in ${desiredSeconds.toFixed(1)} s`,
  );

  // --- connect: every agent on its site's leaf, online, its apps running ------------------------
  sampler.phase = "connect";
  const connectStart = Date.now();
  const connectProgress = new Progress("online", nids.length);
  const startedPromise = workers.connect(options.connectPerSecond, options.connectInFlight);
  const connectTimeout = remaining(Math.max(300_000, (nids.length / options.connectPerSecond) * 3_000));
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
  const allOnlineSeconds =
    online >= nids.length ? ((onlineEvents.at(-1)?.at ?? Date.now()) - connectStart) / 1000 : null;
  connectProgress.finish(
    `${online} online${allOnlineSeconds !== null ? `; all after ${allOnlineSeconds.toFixed(1)} s` : ""}`,
  );
  if (connectLatency.missing.length > 0)
    problems.push(
      `${connectLatency.missing.length} nodes never came online within ${Math.round(connectTimeout / 1000)} s.`,
    );
  const instancesTotal = nids.length * apps.length;
  const runningCount = async () =>
    Number(
      (
        await sql.query<{ n: string }>(
          "SELECT count(*) AS n FROM app_instance WHERE organization_id = $1 AND state = 'running'",
          [organization.id],
        )
      ).rows[0]?.n ?? 0,
    );
  const appsProgress = new Progress("apps", instancesTotal);
  const appsRunning = await waitUntil(appsProgress, instancesTotal, remaining(300_000), runningCount);
  const allRunningSeconds = appsRunning >= instancesTotal ? (Date.now() - connectStart) / 1000 : null;
  appsProgress.finish(`${appsRunning} of ${instancesTotal} app instances running`);
  if (appsRunning < instancesTotal)
    problems.push(`${instancesTotal - appsRunning} app instances not running after connect.`);

  // --- idle: cost per node, uplink, then a CPU profile of the gateway ---------------------------
  sampler.phase = "settle";
  await countdown("settle", 30);
  sampler.phase = "idle";
  const varzBefore = await varz(monitorUrl);
  const idleStart = Date.now();
  await countdown("idle", options.idleSeconds, () => `${nids.length} nodes on ${leaves.length} leaves`);
  const varzAfter = await varz(monitorUrl);
  const idleWindowMs = Date.now() - idleStart;
  const idleMinutes = idleWindowMs / 60_000;
  // Leaves forward what their agents publish to the hub (heartbeats, metrics): the hub's in_bytes
  // is the fleet's uplink as the control plane receives it.
  const hubIn = (varzAfter.in_bytes ?? 0) - (varzBefore.in_bytes ?? 0);
  const uplinkBytesPerNodePerMinute = nids.length > 0 ? hubIn / nids.length / idleMinutes : null;
  const idleCost = costPerNode(componentCosts(sampler.samples, "idle", "baseline"), Math.max(1, online));
  const mimir = await mimirActiveSeries(need("MIMIR_URL"));
  const mimirIdle = idleCost.components.find((c) => c.component === "mimir");
  step(
    `idle: control plane ${idleCost.cpuMsPerNodePerMinute.toFixed(3)} CPU-ms/min and ${idleCost.memoryKiBPerNode.toFixed(1)} KiB per node; uplink ${uplinkBytesPerNodePerMinute?.toFixed(1)} B/min per node`,
  );

  // --- API with the fleet idle (after the cost window, so the calls' database work is not in it) --
  const apiPhases: ApiPhaseResult[] = [];
  const apiCases = scaleApiCases({
    nodeIds: nids,
    siteIds: leaves.map((leaf) => leaf.siteId),
    appIds: apps.map(({ app }) => app.id),
    expectedTotal: nids.length,
  });
  const measureApi = (phaseName: string, until: Promise<unknown>) =>
    consoleApi
      ? measureApiDuring({
          phase: phaseName,
          web: consoleApi.web,
          apiKey: consoleApi.apiKey,
          cases: apiCases,
          requests: options.apiRequests,
          until,
        })
      : null;
  if (consoleApi) {
    sampler.phase = "idle api";
    await phase("API (idle)", async () => {
      const result = await measureApi("idle", sleep(options.apiSeconds * 1000));
      if (result) apiPhases.push(result);
    });
  }

  /**
   * The gateway's V8 profile (its internal /debug/cpu-profile: the running process in place, not
   * the warm-up a restart under --cpu-prof shows) and the hub's Go profile (the scale profile's
   * prof_port) over the same `seconds`, written to var/scale/profiles/{gateway,hub}-<name>.*.
   */
  const profileDir = join(VAR_DIR, "profiles");
  let profileDirReady = false;
  async function takeProfiles(name: string, seconds: number): Promise<ProfilePair> {
    // The first profile of a run empties the previous run's; a run with --no-profile leaves them.
    if (!profileDirReady) {
      rmSync(profileDir, { recursive: true, force: true });
      mkdirSync(profileDir, { recursive: true });
      profileDirReady = true;
    }
    const from = Date.now();
    const gatewayProfiling = fetch(`${gateway.url}/internal/debug/cpu-profile?seconds=${seconds}`, {
      headers: { authorization: `Bearer ${need("GATEWAY_INTERNAL_TOKEN")}` },
      signal: AbortSignal.timeout((seconds + 60) * 1000),
    }).then(async (response) => {
      if (!response.ok)
        throw new Error(`the gateway's CPU profile answered ${response.status}: ${await response.text()}`);
      return (await response.json()) as CpuProfile;
    });
    // Awaited below, after the Go profiles: handled now so an early failure is not unhandled.
    gatewayProfiling.catch(() => undefined);
    const hubFile = join(profileDir, `hub-${name}.pprof`);
    const hubProfiling = env.NATS_PROFILE_URL
      ? takeGoCpuProfile(env.NATS_PROFILE_URL, seconds, hubFile)
      : Promise.reject(new Error("the stack has no NATS_PROFILE_URL (the hub runs without prof_port)"));
    const leafFile = join(profileDir, `leaf-${name}.pprof`);
    const leafProfiling = takeGoCpuProfile(leafProfileUrl, seconds, leafFile);
    /** A Go profile's summary once it was taken; null (and a problem said) when it was not. */
    const goProfile = async (server: string, file: string, profiling: Promise<void>) => {
      try {
        await profiling;
        const summary = await summarizeGoProfile(file, seconds * 1000);
        step(
          `${server} profile (${name}): ${summary.busyMs.toFixed(0)} ms of CPU in ${seconds} s (${relative(REPO_ROOT, file)})`,
        );
        return summary;
      } catch (error) {
        problems.push(
          `No ${server} CPU profile (${name}): ${error instanceof Error ? error.message : String(error)}`,
        );
        return null;
      }
    };
    // Both handled at once: a profile that fails early must not be an unhandled rejection.
    const [leaf, hub] = await Promise.all([
      goProfile("leaf", leafFile, leafProfiling),
      goProfile("hub", hubFile, hubProfiling),
    ]);
    const pair: ProfilePair = { gateway: null, leaf, hub };
    try {
      const profile = await gatewayProfiling;
      const file = join(profileDir, `gateway-${name}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      const to = Date.now();
      const profiled = sampler.samples.filter((s) => s.component === "gateway" && s.at > from && s.at <= to);
      const summary = summarizeProfile(profile, 0);
      pair.gateway = {
        ...summary,
        gatewayCpuPercent: profiled.reduce((sum, s) => sum + s.cpuPercent, 0) / Math.max(1, profiled.length),
      };
      step(
        `gateway profile (${name}): ${summary.busyMs.toFixed(0)} ms busy of ${summary.windowMs.toFixed(0)} ms (${relative(REPO_ROOT, file)})`,
      );
    } catch (error) {
      problems.push(
        `No gateway CPU profile (${name}): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    return pair;
  }

  /**
   * The hub's and the profiled leaf's heap by allocation site, their stacks and goroutines, with
   * the nodes each serves: the memory per node, explained (var/scale/profiles/{hub,leaf}-heap-<name>.pprof).
   */
  async function takeMemoryProfiles(name: string): Promise<ScaleResults["memoryProfiles"]> {
    const heap = async (server: string, url: string | undefined) => {
      if (!url) return null;
      const file = join(profileDir, `${server}-heap-${name}.pprof`);
      try {
        const summary = await summarizeGoHeap(file, await takeGoHeapProfile(url, file));
        step(
          `${server} memory (${name}): heap ${(summary.heapInuseBytes / 2 ** 20).toFixed(0)} MiB, stacks ${(summary.stackBytes / 2 ** 20).toFixed(0)} MiB, ${summary.goroutines ?? "?"} goroutines (${relative(REPO_ROOT, file)})`,
        );
        return summary;
      } catch (error) {
        problems.push(
          `No ${server} heap profile (${name}): ${error instanceof Error ? error.message : String(error)}`,
        );
        return null;
      }
    };
    const leafSite = leaves[profiledLeaf];
    const leafNodes = leafSite
      ? nids.filter((_, index) => index % options.sites === leafSite.index).length
      : 0;
    return {
      hub: await heap("hub", env.NATS_PROFILE_URL),
      leaf: await heap("leaf", leafProfileUrl),
      nodes: nids.length,
      leafNodes,
    };
  }

  let gatewayProfile: ScaleResults["gatewayProfile"] = null;
  let hubProfile: ScaleResults["hubProfile"] = null;
  let leafProfile: ScaleResults["leafProfile"] = null;
  let memoryProfiles: ScaleResults["memoryProfiles"] = null;
  if (options.profileSeconds > 0) {
    sampler.phase = "profile";
    step(`CPU profiles of the running gateway and hub over ${options.profileSeconds} s of idle`);
    const profiling = takeProfiles("idle", options.profileSeconds);
    await countdownWhile(
      "profile",
      options.profileSeconds,
      profiling.then(() => undefined),
    );
    ({ gateway: gatewayProfile, hub: hubProfile, leaf: leafProfile = null } = await profiling);
    memoryProfiles = await takeMemoryProfiles("idle");
  }

  // --- rollout: a new version of app-0 to every node, in batches --------------------------------
  sampler.phase = "rollout";
  let rollout: ScaleResults["rollout"] = null;
  let rolloutLatencies: number[] = [];
  let rolloutProfile: ScaleResults["rolloutProfile"] = null;
  await phase("rollout", async () => {
    const target = apps[0];
    if (!target) throw new Error("no apps");
    const v2 = await db.appVersion.create({
      data: {
        organizationId: organization.id,
        appId: target.app.id,
        version: "2.0.0",
        artifactUrl: "builtin:sleep",
        runSpec: { command: ["sleep", "1000001"] },
      },
    });
    const system = { type: "system" as const, id: "bench-scale" };
    const strategy = rolloutStrategySchema.parse({
      batches: Array.from({ length: options.rolloutBatches - 1 }, () => ({
        percent: 100 / options.rolloutBatches,
      })),
      defaults: { successThreshold: 99, timeoutSeconds: 300, offline: "skip" },
      onBatchFailure: "pause",
    });
    const rolloutId = await db.$transaction(
      (tx) =>
        insertRollout(tx, {
          organizationId: organization.id,
          appId: target.app.id,
          appVersionId: v2.id,
          selector: "bench=scale",
          siteIds: [],
          strategy,
          versionLabel: "2.0.0",
          actor: system,
        }),
      { maxWait: 15_000, timeout: 120_000 },
    );
    const rolloutStart = Date.now();
    const startedRollout = await db.$transaction(
      (tx) => actOnRollout(tx, organization.id, rolloutId, { type: "start" }, system),
      { maxWait: 15_000, timeout: 300_000 },
    );
    if (!startedRollout.ok) problems.push(`The rollout did not start: ${JSON.stringify(startedRollout)}`);
    // Where the CPU goes while batches are dispatched and reported (the desired → running SLI).
    const rolloutProfiling =
      options.profileSeconds > 0 ? takeProfiles("rollout", Math.min(options.profileSeconds, 60)) : null;
    const rolloutProgress = new Progress("rollout", nids.length);
    let status = "running";
    let finishedAt: number | null = null;
    let running = 0;
    const deadline = Date.now() + remaining(Math.max(600_000, nids.length * 120));
    while (startedRollout.ok && Date.now() < deadline) {
      running = await facts.runningCount(target.app.id, v2.id);
      const row = (
        await sql.query<{ status: string; finished: number | null }>(
          "SELECT status::text AS status, extract(epoch FROM finished_at) * 1000 AS finished FROM rollout WHERE id = $1",
          [rolloutId],
        )
      ).rows[0];
      status = row?.status ?? "unknown";
      rolloutProgress.update(running, status);
      if (row?.finished != null || !["running", "pending"].includes(status)) {
        finishedAt = row?.finished != null ? Number(row.finished) : Date.now();
        break;
      }
      await sleep(1_000);
    }
    rolloutProfile = rolloutProfiling ? await rolloutProfiling : null;
    rolloutLatencies = allLatencies(await facts.since(rolloutStart), v2.id);
    rollout = {
      nodes: nids.length,
      batches: options.rolloutBatches,
      status,
      seconds: finishedAt !== null ? (finishedAt - rolloutStart) / 1000 : null,
      running,
    };
    rolloutProgress.finish(
      `${running} of ${nids.length} on 2.0.0, ${status}${rollout.seconds !== null ? ` after ${rollout.seconds.toFixed(1)} s` : ""}`,
    );
    if (status !== "completed")
      problems.push(`The rollout ended ${status} with ${running} of ${nids.length} nodes on the version.`);
  });

  // --- hub restart with the fleet online: leaves reconnect, agents stay on their leaves ---------
  sampler.phase = "hub restart";
  let hubRestart: ScaleResults["hubRestart"] = null;
  await phase("hub restart", async () => {
    const before = await gateway.metricsText().catch(() => "");
    const restartProgress = new Progress("hub", nids.length);
    // Each node's last written metrics report before the restart (this client's session only).
    await sql.query("DROP TABLE IF EXISTS pg_temp.metrics_seq_before_restart");
    await sql.query(
      "CREATE TEMP TABLE metrics_seq_before_restart AS SELECT id, metrics_seq FROM node WHERE organization_id = $1",
      [organization.id],
    );
    const restart = await restartNats(monitorUrl);
    const leavesBack = await waitUntil(new Progress("leafz", leaves.length), leaves.length, 60_000, () =>
      hubLeafCount(monitorUrl),
    );
    const leavesBackMs = leavesBack >= leaves.length ? Date.now() - restart.stoppedAt : null;
    // Resynced = heard from again: a metrics report of the node went through the hub and the
    // gateway into Postgres after the restart (its sign of life: agents send no heartbeat while
    // reports flow, and last_seen_at is rewritten only when older than refreshAfter).
    const heardSince = async () =>
      Number(
        (
          await sql.query<{ n: string }>(
            `SELECT count(*) AS n FROM node n JOIN metrics_seq_before_restart b ON b.id = n.id
             WHERE n.metrics_seq > b.metrics_seq`,
          )
        ).rows[0]?.n ?? 0,
      );
    const heard = await waitUntil(
      restartProgress,
      nids.length,
      // Nodes that sent nothing during the outage are heard at their next report.
      remaining(Math.max(180_000, 2 * options.metricsSeconds * 1000 + 60_000)),
      heardSince,
      () => "heard from again",
    );
    const heardAllSeconds = heard >= nids.length ? (Date.now() - restart.stoppedAt) / 1000 : null;
    const after = await gateway.metricsText().catch(() => "");
    const delta = (name: string, label?: string) =>
      counterValue(after, name, label) - counterValue(before, name, label);
    hubRestart = {
      serverDownMs: restart.readyAt - restart.stoppedAt,
      leavesBackMs,
      heardAgain: heard,
      heardAllSeconds,
      offlineMarked: await events.countSince("node:offline", restart.stoppedAt),
      fullLists: delta("edgefleet_gateway_desired_full_lists_total"),
      hellos: delta("edgefleet_gateway_edge_messages_total", 'type="hello"'),
    };
    restartProgress.finish(
      `hub down ${hubRestart.serverDownMs} ms; leaves back after ${leavesBackMs ?? "—"} ms; ${heard} of ${nids.length} heard again${heardAllSeconds !== null ? ` within ${heardAllSeconds.toFixed(1)} s` : ""}; ${hubRestart.offlineMarked} marked offline; ${hubRestart.fullLists} full re-lists`,
    );
  });

  // --- one leaf restart: its site's agents reconnect, the other sites see nothing ---------------
  sampler.phase = "leaf restart";
  let leafRestart: ScaleResults["leafRestart"] = null;
  await phase("leaf restart", async () => {
    const leaf = leaves[0] as SiteLeaf;
    const siteNids = nids.filter((nid) => siteOfNid.get(nid) === leaf.index);
    const otherNids = nids.filter((nid) => siteOfNid.get(nid) !== leaf.index);
    const before = await gateway.metricsText().catch(() => "");
    // One watch (a worker answers one at a time): the site's agents and a spread sample of the
    // others; it runs to its timeout, as the others are expected never to reconnect.
    const otherSample = new Set(spreadSample(otherNids, 2_000));
    const watch = workers.watchHellos(remaining(LEAF_WATCH_MS), [...siteNids, ...otherSample]);
    await sleep(1_000);
    const stoppedAt = Date.now();
    await countdownWhile(
      "leaf",
      LEAF_WATCH_MS / 1000,
      (async () => {
        await stopLeaf(leaf);
        await startLeaf(leaf, need("NATS_SERVER_BIN"), LOG_DIR, memoryLimits.leaf);
      })(),
    );
    const watched = await watch;
    const resynced = { nodes: watched.nodes.filter((node) => !otherSample.has(node.nid)) };
    const otherHellos = { nodes: watched.nodes.filter((node) => otherSample.has(node.nid)) };
    const after = await gateway.metricsText().catch(() => "");
    const offline = await events.eventsSince("node:offline", stoppedAt);
    const siteSet = new Set(siteNids);
    const last = Math.max(stoppedAt, ...resynced.nodes.map((node) => node.at));
    leafRestart = {
      site: leaf.name,
      siteNodes: siteNids.length,
      resynced: resynced.nodes.length,
      resyncedAllSeconds: resynced.nodes.length >= siteNids.length ? (last - stoppedAt) / 1000 : null,
      otherSitesOffline: offline.filter((event) => !siteSet.has(event.nid)).length,
      otherSitesHellos: otherHellos.nodes.length,
    };
    step(
      `leaf ${leaf.name} restarted: ${leafRestart.resynced} of ${siteNids.length} agents resynced${leafRestart.resyncedAllSeconds !== null ? ` within ${leafRestart.resyncedAllSeconds.toFixed(1)} s` : ""}; other sites: ${leafRestart.otherSitesOffline} offline, ${leafRestart.otherSitesHellos} reconnects (of 2,000 watched); full re-lists ${counterValue(after, "edgefleet_gateway_desired_full_lists_total") - counterValue(before, "edgefleet_gateway_desired_full_lists_total")}`,
    );
    if (leafRestart.otherSitesOffline > 0 || leafRestart.otherSitesHellos > 0)
      problems.push(
        `The leaf restart disturbed other sites: ${leafRestart.otherSitesOffline} offline, ${leafRestart.otherSitesHellos} reconnects.`,
      );
  });

  // --- churn: churnPercent of the nodes fail and return every period ----------------------------
  sampler.phase = "churn";
  const perCycle = Math.max(1, Math.round((nids.length * options.churnPercent) / 100));
  const offlineLatencies: number[] = [];
  const backOnlineLatencies: number[] = [];
  let cycles = 0;
  const churnCycles = async (): Promise<void> => {
    for (let cycle = 0; cycle < options.churnCycles && Date.now() < runDeadline - 60_000; cycle++) {
      const cycleStart = Date.now();
      // A different sample each cycle, spread over every site.
      const sample = churnSample(nids, (nid) => siteOfNid.get(nid) ?? 0, perCycle, cycle);
      const stopMark = Date.now();
      const stopped = await workers.stopAgents(sample);
      const offlineBoundMs = livenessBound(options.heartbeatSeconds).boundMs;
      await waitUntil(
        new Progress(`churn ${cycle + 1} off`, sample.length),
        sample.length,
        offlineBoundMs + 30_000,
        () => events.countSince("node:offline", stopMark),
      );
      offlineLatencies.push(
        ...latenciesFrom(stopped, await events.eventsSince("node:offline", stopMark)).latencies,
      );
      const restartMark = Date.now();
      const restarted = await workers.restartAgents(sample);
      await waitUntil(new Progress(`churn ${cycle + 1} on`, sample.length), sample.length, 120_000, () =>
        events.countSince("node:online", restartMark),
      );
      const back = latenciesFrom(restarted, await events.eventsSince("node:online", restartMark));
      backOnlineLatencies.push(...back.latencies);
      if (back.missing.length > 0)
        problems.push(`Churn cycle ${cycle + 1}: ${back.missing.length} nodes did not come back online.`);
      cycles++;
      const rest = cycleStart + options.churnPeriodSeconds * 1000 - Date.now();
      if (rest > 0 && cycle + 1 < options.churnCycles)
        await countdown(`churn ${cycle + 1} wait`, Math.round(rest / 1000));
    }
  };
  await phase("churn", async () => {
    const churning = churnCycles();
    // The API calls go on through the churn, one pass after another until it ends.
    const apiDuringChurn = measureApi(
      "churn",
      churning.catch(() => undefined),
    );
    try {
      await churning;
    } finally {
      if (apiDuringChurn) apiPhases.push(await apiDuringChurn);
    }
  });
  const churn =
    cycles > 0
      ? { cycles, nodesPerCycle: perCycle, memorySlopes: memorySlopes(sampler.samples, "churn") }
      : null;

  // --- generators: what one simulated node costs (with node: the Go hollow mode's sample beside) --
  const generators: GeneratorCost[] = [];
  const generatorIdle = usageByPhase(sampler.samples).find(
    (u) => u.component === generatorComponent && u.phase === "idle",
  );
  const generatorIdleCost = componentCosts(sampler.samples, "idle", "baseline").find(
    (c) => c.component === generatorComponent,
  );
  if (generatorIdle && generatorIdleCost)
    generators.push({
      generator:
        options.generator === "go"
          ? "native agent (Go) hollow mode, --control stdio (this scenario's generator)"
          : "hollow agents, Node (agent-sdk, this scenario's generator)",
      nodes: nids.length,
      connected: online,
      windowSeconds: Math.round(idleWindowMs / 1000),
      rssKiBPerNode: (generatorIdle.rssMiBMax * 1024) / nids.length,
      cpuMsPerNodePerMinute: (generatorIdleCost.cpuPercent * 600) / nids.length,
      baselineRssMiB: 0,
    });
  if (options.generator === "node" && options.goSample > 0) {
    sampler.phase = "go generator";
    step(
      `native agent hollow mode: ${options.goSample} nodes on ${leaves[1 % leaves.length]?.name} for ${options.goSeconds} s`,
    );
    try {
      const binary = buildNativeAgent(REPO_ROOT);
      const credsFile = need("NATS_ENROLL_CREDS");
      const measuring = measureGoHollow({
        binary,
        count: options.goSample,
        token: siteTokens[1 % siteTokens.length] ?? token,
        url: (leaves[1 % leaves.length] as SiteLeaf).url,
        enrollUrl: need("NATS_URL"),
        enrollCredsFile: credsFile,
        windowSeconds: options.goSeconds,
        logFile: join(LOG_DIR, "scale-go-hollow.log"),
        namePrefix: "scale-go",
        onStart: (pid) => {
          goGenerator = pid;
        },
      });
      generators.push(await measuring);
    } catch (error) {
      problems.push(
        `The native hollow mode was not measured: ${error instanceof Error ? error.message : error}`,
      );
    }
    goGenerator = undefined;
  }

  // --- wrap up ----------------------------------------------------------------------------------
  const gatewayCounters = countersOf(await gateway.metricsText().catch(() => ""));
  sampler.sample();
  sampler.stop();
  const fleetSeries = [
    ...cumulativeSeries(enrolledTimes, enrollStart, 5_000).map((p) => ({ ...p, series: "enrolled" })),
    ...cumulativeSeries(
      onlineEvents.map((e) => e.at),
      enrollStart,
      5_000,
    ).map((p) => ({ ...p, series: "online" })),
  ];
  const results: ScaleResults = {
    command,
    commit: gitCommit(REPO_ROOT),
    natsVersion: await serverVersion(monitorUrl).catch(() => "unknown"),
    machine: describeMachine(),
    load: { start: loadAtStart, end: loadavg() },
    config: {
      generator: options.generator,
      nodes: options.nodes,
      sites: options.sites,
      appsPerNode: options.appsPerNode,
      hollowProcesses: options.hollowProcesses,
      idleSeconds: options.idleSeconds,
      rolloutBatches: options.rolloutBatches,
      churnPercent: options.churnPercent,
      churnPeriodSeconds: options.churnPeriodSeconds,
      churnCycles: cycles,
      heartbeatSeconds: options.heartbeatSeconds,
      metricsSeconds: options.metricsSeconds,
      memoryLimits,
    },
    enrollment: {
      enrolled: enrolled.nodes.length,
      failures: enrolled.failures,
      seconds: enrollSeconds,
      perSecond: enrollRate,
    },
    desiredApps: { instances: nids.length * apps.length, seconds: desiredSeconds },
    connect: { online, allOnlineSeconds, appsRunning, allRunningSeconds },
    fleetSeries,
    latency: {
      "agent connected → online": summarize(connectLatency.latencies),
      "desired committed → running (rollout)": summarize(rolloutLatencies),
      "agent gone → offline (churn)": summarize(offlineLatencies),
      "agent back → online (churn)": summarize(backOnlineLatencies),
    },
    latencyCurves: [
      ...percentileCurve("connect → online", connectLatency.latencies),
      ...percentileCurve("desired → running", rolloutLatencies),
      ...percentileCurve("gone → offline", offlineLatencies),
      ...percentileCurve("back → online", backOnlineLatencies),
    ],
    idle: {
      windowSeconds: Math.round(idleWindowMs / 1000),
      uplinkBytesPerNodePerMinute,
      uplinkKbitPerSecond:
        uplinkBytesPerNodePerMinute !== null ? (uplinkBytesPerNodePerMinute * 8) / 60 / 1000 : null,
      hubMsgsPerSecond: ((varzAfter.in_msgs ?? 0) - (varzBefore.in_msgs ?? 0)) / (idleWindowMs / 1000),
      hubVarz: varzAfter,
      cost: idleCost,
      mimirActiveSeries: mimir,
      mimirPssMiB: mimirIdle?.pssMiB ?? null,
    },
    rollout,
    hubRestart,
    leafRestart,
    churn,
    generators,
    gatewayProfile,
    hubProfile,
    leafProfile,
    memoryProfiles,
    rolloutProfile,
    api: apiPhases,
    usage: usageByPhase(sampler.samples),
    timeline: sampler.samples,
    gatewayCounters,
    problems,
    notes: options.notes,
  };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  const report = await writeScaleReport(results, options.outDir);
  step(`report: ${relative(REPO_ROOT, report)}; raw numbers: ${relative(REPO_ROOT, RESULTS_FILE)}`);
  for (const problem of problems) process.stdout.write(`  ! ${problem}\n`);
}

/** Progress while `work` runs and the watch window passes. */
async function countdownWhile(label: string, seconds: number, work: Promise<void>): Promise<void> {
  const ticker = countdown(label, seconds);
  await work;
  await ticker;
}

async function countdown(label: string, seconds: number, detail: () => string = () => ""): Promise<void> {
  const progress = new Progress(label, seconds);
  const start = Date.now();
  while (Date.now() - start < seconds * 1000) {
    progress.update(Math.floor((Date.now() - start) / 1000), detail());
    await sleep(1_000);
  }
  progress.finish(`${seconds} s`);
}

/** The hub's /varz numbers (cpu, mem, connections, leafnodes, subscriptions, in/out msgs and bytes). */
async function varz(monitorUrl: string): Promise<Record<string, number>> {
  const response = await fetch(`${monitorUrl}/varz`, { signal: AbortSignal.timeout(10_000) });
  const body = (await response.json()) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(body).filter((entry): entry is [string, number] => typeof entry[1] === "number"),
  );
}

/** Series Mimir's ingesters hold in memory now (all tenants), from its own /metrics. */
async function mimirActiveSeries(mimirUrl: string): Promise<number | null> {
  try {
    const text = await (await fetch(`${mimirUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
    const value = counterValue(text, "cortex_ingester_memory_series");
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

function countersOf(metricsText: string): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const line of metricsText.split("\n")) {
    if (line.startsWith("#")) continue;
    const name = line.split(/[{ ]/, 1)[0] ?? "";
    if (!name.startsWith("edgefleet_gateway_") || !name.endsWith("_total")) continue;
    totals[name] = (totals[name] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return totals;
}

function counterValue(metricsText: string, name: string, label?: string): number {
  let sum = 0;
  for (const line of metricsText.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (label && !line.includes(label)) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

main().catch((error: unknown) => {
  if (error instanceof HelpRequested) {
    process.stdout.write(`${error.message}\n`);
    process.exit(0);
  }
  if (error instanceof UsageError) {
    process.stderr.write(`bench:scale: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `bench:scale failed: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
  );
  process.exit(1);
});
