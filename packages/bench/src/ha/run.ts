import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join, relative, resolve } from "node:path";
import { createEnrollmentToken, createPrismaClient, type Db } from "@edgefleet/db";
import { rolloutStrategySchema } from "@edgefleet/rollout";
import { actOnRollout, insertRollout } from "@edgefleet/rollout-store";
import { type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import pg from "pg";
import { trpcData } from "../console/cases.js";
import { timedRequest } from "../console/http.js";
import { allowConsoleOrigin, signInToConsole } from "../console/keycloak.js";
import { migrateAndSeedDemo, prepareApp, WebProcess } from "../console/stack.js";
import type { NodeDeliveries } from "../delivery-ledger.js";
import { type Cleanup, runWithCleanup } from "../interrupt.js";
import { describeMachine, gitCommit } from "../machine.js";
import { serverVersion } from "../nats-monitor.js";
import { Progress, step } from "../progress.js";
import { RolloutFacts } from "../rollout/instrumentation.js";
import { leftBehind, runningSeries, updatedTwice } from "../rollout/measure.js";
import {
  benchStackRunning,
  GatewayProcess,
  LOG_DIR,
  PROFILE,
  REPO_ROOT,
  stackDown,
  stackUp,
  VAR_DIR,
  waitUntilPortFree,
} from "../stack.js";
import { WorkerPool } from "../workers.js";
import { accountDeliveries, type DeliveryAccount, sumAccounts } from "./accounting.js";
import { writeHaCharts } from "./charts.js";
import { SiteLeaf } from "./leaves.js";
import { failuresSeen, firstObservations, healedAfter, normalLevels, recoveryAfter } from "./recovery.js";
import { renderHaReport } from "./report.js";
import {
  type HaBenchResults,
  KILL_TARGETS,
  type KillRecord,
  type KillTarget,
  type PartitionRecord,
} from "./results.js";
import { TimelineSampler } from "./sampler.js";
import { type Crash, crashAndRestart, crashAndRestartPostgres } from "./servers.js";

/**
 * The HA and chaos scenario (issue 8 #14) on the `ha` stack profile: a three-node NATS cluster,
 * two gateways, two consoles, Postgres, Mimir and Keycloak; hollow agents behind two site leaves.
 * Steady reporting, then site B is cut off from the hub while a rollout runs, and each server is
 * killed (-9) in turn and started again; then site B comes back. Every report an agent got a PubAck
 * for is looked for in the inventory and in Mimir, every node's updates are counted, and every
 * kill's recovery is read off a per-second timeline of what users and agents saw.
 */

export interface HaOptions {
  nodes: number;
  steadySeconds: number;
  partitionSeconds: number;
  /** The first kill comes this long after the partition began, the next ones this far apart. */
  killSpacingSeconds: number;
  metricsIntervalS: number;
  statusRefreshS: number;
  outDir: string;
  notes: string[];
  keep: boolean;
  command: string;
}

const SITES = ["ha-a", "ha-b"] as const;
const REPLICAS = 2;
const ROLLOUT_BATCHES_SITE_A = 10;
const ROLLOUT_PAUSE_SECONDS = 40;
const ARTIFACT_BYTES = 256 * 1024;
const RESULTS = "ha-chaos-results.json";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runHaBench(options: HaOptions & { renderOnly: boolean }): Promise<void> {
  const outDir = resolve(REPO_ROOT, options.outDir);
  if (options.renderOnly) {
    // The last run's numbers (var/ha), else the committed ones beside the report.
    const file = existsSync(join(VAR_DIR, RESULTS)) ? join(VAR_DIR, RESULTS) : join(outDir, RESULTS);
    const results = JSON.parse(readFileSync(file, "utf8")) as HaBenchResults;
    await writeReport({ ...results, notes: [...results.notes, ...options.notes] }, outDir);
    return;
  }
  await runWithCleanup((cleanup) => run(options, outDir, cleanup));
}

/** SQL the benchmark adds to its own database: every advance of a node's status sequence. */
const STATUS_INSTRUMENTATION = `
CREATE TABLE IF NOT EXISTS bench_ha_status (node_id uuid NOT NULL, seq bigint NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE OR REPLACE FUNCTION bench_ha_status_fact() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bench_ha_status (node_id, seq) VALUES (NEW.id, NEW.status_seq);
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS bench_ha_status ON node;
CREATE TRIGGER bench_ha_status AFTER UPDATE OF status_seq ON node
  FOR EACH ROW WHEN (NEW.status_seq IS DISTINCT FROM OLD.status_seq) EXECUTE FUNCTION bench_ha_status_fact();
`;

async function run(options: HaOptions, outDir: string, cleanup: Cleanup): Promise<void> {
  const problems: string[] = [];
  if (benchStackRunning())
    throw new Error(
      `an ${PROFILE} stack is already running; stop it first: EDGEFLEET_PROFILE=${PROFILE} ./edgefleet down`,
    );

  // --- the stack ------------------------------------------------------------------------------------
  step(
    `starting the ${PROFILE} stack: Postgres, 3 NATS nodes, Mimir, Keycloak (logs in ${relative(REPO_ROOT, LOG_DIR)})`,
  );
  const stackStarting = stackUp();
  cleanup.add("stack down", async () => {
    await stackStarting.catch(() => undefined);
    if (options.keep)
      return step(`--keep: the ${PROFILE} stack stays up (EDGEFLEET_PROFILE=${PROFILE} ./edgefleet down)`);
    step(`stopping the ${PROFILE} stack`);
    await stackDown();
  });
  const env = await stackStarting;
  const need = (name: string) => {
    const value = env[name];
    if (!value) throw new Error(`var/${PROFILE}/stack.env has no ${name}`);
    return value;
  };
  const list = (name: string) => need(name).split(",");
  const databaseUrl = need("DATABASE_URL");
  step("the console, built for production from HEAD (reused while its sources are unchanged)");
  const app = await prepareApp(env, "HEAD", [], (text) => step(`  ${text}`), LOG_DIR);
  step("migrations and the demo organizations");
  await migrateAndSeedDemo(app.dir, env, LOG_DIR);
  const facts = await RolloutFacts.open(databaseUrl);
  cleanup.add("close Postgres (facts)", () => facts.close());
  await withPg(databaseUrl, (client) => client.query(STATUS_INSTRUMENTATION));
  const db: Db = createPrismaClient(databaseUrl);
  cleanup.add("close Prisma", () => db.$disconnect());

  // --- two gateways, two consoles ------------------------------------------------------------------
  const gatewayUrls = list("GATEWAY_URL");
  const generation = [0, 0];
  const gatewayEnv = (replica: number) => ({
    GATEWAY_METRICS_INTERVAL_S: String(options.metricsIntervalS),
    GATEWAY_ARTIFACT_CACHE_DIR: join(VAR_DIR, `gateway-${replica + 1}-artifacts`),
    // Known names in rollout leases: the benchmark kills the replica that holds the rollout.
    GATEWAY_REPLICA_ID: `gateway-${replica + 1}.${++(generation[replica] as number)}`,
  });
  const startGateway = (replica: number, restart = false) =>
    GatewayProcess.start(env, gatewayEnv(replica), [], {
      port: Number(new URL(gatewayUrls[replica] as string).port),
      logName: `gateway-${replica + 1}.log`,
      restart,
    });
  const gateways: GatewayProcess[] = [];
  for (let replica = 0; replica < REPLICAS; replica++) gateways.push(await startGateway(replica));
  cleanup.add("stop the gateways", () => Promise.all(gateways.map((gateway) => gateway.stop())));
  step(`gateways ready at ${gatewayUrls.join(", ")}`);
  const consoles: WebProcess[] = [];
  cleanup.add("stop the consoles", () => Promise.all(consoles.map((web) => web.stop())));
  for (let replica = 0; replica < REPLICAS; replica++)
    consoles.push(
      await WebProcess.start(
        app.dir,
        env,
        {},
        {
          port: Number(need("WEB_PORT")) + replica,
          logFile: join(LOG_DIR, `web-${replica + 1}.log`),
        },
      ),
    );
  const consoleUrls = consoles.map((web) => web.url);
  step(`consoles ready at ${consoleUrls.join(", ")}`);
  // The realm file lists the ha consoles, but Keycloak's import folder is shared by every checkout
  // on the machine (another stack may have copied its own file there): allow them explicitly.
  for (const origin of consoleUrls)
    await allowConsoleOrigin({
      keycloakUrl: need("KEYCLOAK_URL"),
      realm: "edgefleet",
      clientId: need("AUTH_KEYCLOAK_ID"),
      origin,
      admin: { username: need("KEYCLOAK_ADMIN_USERNAME"), password: need("KEYCLOAK_ADMIN_PASSWORD") },
    });
  step("signing alice in through Keycloak; an operator API key");
  const session = await signInToConsole(consoleUrls[0] as string, "alice", "edgefleet");
  session.set("edgefleet-org", "acme");
  const apiKey = trpcData<{ key: string }>(
    await timedRequest(`${consoleUrls[0]}/api/trpc/apiKey.create`, {
      method: "POST",
      headers: { cookie: session.header(), "content-type": "application/json" },
      body: JSON.stringify({ json: { name: `bench-ha-${Date.now()}`, role: "operator" } }),
    }),
  ).key;

  // --- two sites, their leaves, the hollow fleet -----------------------------------------------------
  const acme = await db.organization.findUniqueOrThrow({ where: { slug: "acme" } });
  const sites = await Promise.all(
    SITES.map((name) => db.site.create({ data: { organizationId: acme.id, name } })),
  );
  const leaves: SiteLeaf[] = [];
  cleanup.add("stop the site leaves", () => Promise.all(leaves.map((leaf) => leaf.stop())));
  const { freePort } = await import("@edgefleet/agent-sdk/testing");
  for (const [index, site] of sites.entries()) {
    leaves.push(
      await SiteLeaf.create({
        site,
        organizationId: acme.id,
        gatewayUrl: gatewayUrls[0] as string,
        internalToken: need("GATEWAY_INTERNAL_TOKEN"),
        port: await freePort(),
        natsServerBin: need("NATS_SERVER_BIN"),
        hubLeafUrls: list("NATS_LEAF_URL"),
        // Site B's WAN link runs through relays the benchmark cuts.
        cuttable: index === 1,
      }),
    );
  }
  const [leafA, leafB] = leaves as [SiteLeaf, SiteLeaf];
  step(`site leaves up: ${SITES[0]} at ${leafA.url}, ${SITES[1]} at ${leafB.url} (its link cuttable)`);

  const pool = await WorkerPool.start(SITES.length, LOG_DIR);
  cleanup.add("stop the hollow agents", () => pool.stop());
  const perSite = [Math.ceil(options.nodes / 2), Math.floor(options.nodes / 2)];
  const enrollCreds = await readFile(need("NATS_ENROLL_CREDS"), "utf8");
  const tokens = await Promise.all(
    sites.map((site, index) =>
      createEnrollmentToken(db, acme.id, {
        expiresAt: new Date(Date.now() + 6 * 3_600_000),
        maxUses: perSite[index] as number,
        siteId: site.id,
        labels: { ha: "fleet", hasite: index === 0 ? "a" : "b" },
        description: `benchmark: HA fleet of ${site.name}`,
      }),
    ),
  );
  const enrollProgress = new Progress("enroll", options.nodes);
  const enrollTicker = setInterval(() => enrollProgress.update(pool.totals().enrolled), 500);
  const enrolled = await pool
    .enrollEach(
      sites.map((_, index) => ({
        firstIndex: index === 0 ? 0 : (perSite[0] as number),
        count: perSite[index] as number,
        token: tokens[index]?.token as string,
        natsUrl: list("NATS_URL")[0] as string,
        agentUrls: [(leaves[index] as SiteLeaf).url],
        enrollCreds,
        namePrefix: `ha-${index === 0 ? "a" : "b"}`,
        concurrency: 8,
        fetchArtifacts: true,
        statusRefreshSeconds: options.statusRefreshS,
      })),
    )
    .finally(() => clearInterval(enrollTicker));
  enrollProgress.finish(`${enrolled.perWorker.flat().length} nodes`);
  if (enrolled.failures > 0)
    problems.push(`${enrolled.failures} enrollments failed (first: ${enrolled.firstError}).`);
  const siteOfNode = new Map<string, number>();
  enrolled.perWorker.forEach((nodes, site) => {
    for (const node of nodes) siteOfNode.set(node.nid, site);
  });
  const allNids = [...siteOfNode.keys()];
  await pool.connect(20, 16);
  const onlineProgress = new Progress("online", allNids.length);
  const onlineDeadline = Date.now() + 180_000;
  let online = 0;
  while (Date.now() < onlineDeadline) {
    online = await db.node.count({
      where: { organizationId: acme.id, status: "online", id: { in: allNids } },
    });
    onlineProgress.update(online, `connected ${pool.totals().connected}`);
    if (online >= allNids.length) break;
    await sleep(500);
  }
  onlineProgress.finish(`${online} online`);
  if (online < allNids.length)
    problems.push(`${allNids.length - online} nodes were not online before the chaos.`);

  // The version the rollout installs: a real artifact in the organization's (replicated) store.
  const appRow = await db.app.create({ data: { organizationId: acme.id, name: "ha-app" } });
  const version = await uploadVersion(
    db,
    gatewayUrls[0] as string,
    need("GATEWAY_INTERNAL_TOKEN"),
    acme.id,
    appRow.id,
  );

  // --- what users and agents see, every second ------------------------------------------------------
  let platform: NatsConnection | null = null;
  let jsm: JetStreamManager | null = null;
  platform = await connect({
    servers: list("NATS_URL"),
    authenticator: credsAuthenticator(readFileSync(need("NATS_CREDS"))),
    name: "bench-ha observer",
    maxReconnectAttempts: -1,
  });
  cleanup.add("close NATS", () => platform?.close());
  jsm = await jetstreamManager(platform, { domain: "hub", timeout: 2_000 });
  const sampler = new TimelineSampler({
    gatewayUrls,
    consoleUrls,
    apiKey,
    session: session.header(),
    keycloakIssuer: need("AUTH_KEYCLOAK_ISSUER"),
    databaseUrl,
    organizationId: acme.id,
    jsm: () => jsm,
    workers: pool,
  });
  sampler.commandNodes = (enrolled.perWorker[0] ?? []).slice(0, consoleUrls.length).map((node) => node.nid);
  sampler.start();
  cleanup.add("stop sampling", () => sampler.stop());
  const ticker = setInterval(() => printLine(sampler, allNids.length), 5_000);
  cleanup.add("stop the ticker", () => clearInterval(ticker));

  // --- steady reporting, then the partition, the rollout and the kills --------------------------------
  const startedAt = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  step(`steady reporting for ${options.steadySeconds} s`);
  await sleep(options.steadySeconds * 1_000);
  step(`site ${SITES[1]} cut off from the hub for ${options.partitionSeconds} s`);
  leafB.cut();
  const cutAt = Date.now();
  await leafB.untilLinked(false, 30_000);

  step(
    "rollout of ha-app 1.0.0 to every node: site A in 10 batches (40 s pauses), then site B (waits for it)",
  );
  const rollout = await startRollout(db, acme.id, appRow.id, version.id, perSite[0] as number);
  sampler.rollout = { id: rollout.id, appId: appRow.id, versionId: version.id };

  const kills: KillRecord[] = [];
  const pendingReady: Array<Promise<number | null>> = [];
  for (const [index, target] of KILL_TARGETS.entries()) {
    const due = cutAt + (index + 1) * options.killSpacingSeconds * 1_000;
    if (due > cutAt + options.partitionSeconds * 1_000)
      problems.push(`the ${target} kill would come after the partition ended: --kill-spacing is too long.`);
    await sleep(due - Date.now());
    const batchesAtKill = await facts.rollout(rollout.id).then(
      (state) => state.batchesStarted,
      () => null,
    );
    const { what, crash } = await crash_(target);
    step(`kill -9 of ${what}; restarted at once`);
    const record: KillRecord = {
      target,
      what,
      at: crash.killedAt,
      restartedAt: crash.restartedAt,
      readyAt: null,
      rolloutBatchesAtKill: batchesAtKill,
      recovery: {
        serverReady: null,
        gatewaysReady: null,
        consoleApi: null,
        nodeCommands: null,
        session: null,
        signIn: null,
        agentsDelivering: null,
        ingestCaughtUp: null,
        controller: null,
        overall: null,
      },
      deliveries: null,
      seen: {},
      observations: [],
    };
    kills.push(record);
    pendingReady.push(
      crash.ready.then(
        (readyAt) => {
          record.readyAt = readyAt;
          step(`${what} ready again after ${((readyAt - crash.killedAt) / 1000).toFixed(1)} s`);
          return readyAt;
        },
        (error: unknown) => {
          problems.push(`${what} did not come back: ${error instanceof Error ? error.message : error}`);
          return null;
        },
      ),
    );
    // The servers' own restarts run on; the next kill waits only for the clock (and for its own
    // target to be up: two crashes of one server at once measure nothing).
    await crash.ready.catch(() => undefined);
  }

  /** Kills the target's most telling instance and starts it again the way a supervisor would. */
  async function crash_(target: KillTarget): Promise<{ what: string; crash: Crash }> {
    switch (target) {
      case "nats": {
        const leader = await (jsm as JetStreamManager).streams
          .info("EF_UP")
          .then((info) => info.cluster?.leader ?? null)
          .catch(() => null);
        const node = Number(/-(\d+)$/.exec(leader ?? "")?.[1] ?? 1);
        const name = node === 1 ? "nats" : `nats-${node}`;
        const monitor = new URL(list("NATS_MONITOR_URL")[node - 1] as string);
        return {
          what: `${name} (${leader ? "EF_UP's stream leader" : "stream leader unknown"})`,
          crash: await crashAndRestart(name, `${monitor.origin}/healthz`),
        };
      }
      case "gateway": {
        const owner = await facts.leaseOwner(rollout.id).catch(() => null);
        const replica = Math.max(0, Number(/^gateway-(\d+)\./.exec(owner ?? "")?.[1] ?? 1) - 1);
        const victim = gateways[replica] as GatewayProcess;
        victim.kill();
        const killedAt = Date.now();
        await new Promise((resolve) =>
          victim.child.exitCode !== null || victim.child.signalCode !== null
            ? resolve(undefined)
            : victim.child.once("exit", resolve),
        );
        await waitUntilPortFree(Number(new URL(gatewayUrls[replica] as string).port));
        const restartedAt = Date.now();
        const ready = startGateway(replica, true).then((gateway) => {
          gateways[replica] = gateway;
          return Date.now();
        });
        return {
          what: `gateway-${replica + 1} (${owner ? "the rollout's lease holder" : "no lease holder seen"})`,
          crash: { killedAt, restartedAt, ready },
        };
      }
      case "postgres":
        return {
          what: "postgres (postmaster and every backend)",
          crash: await crashAndRestartPostgres(databaseUrl),
        };
      case "mimir":
        return { what: "mimir", crash: await crashAndRestart("mimir", `${need("MIMIR_URL")}/ready`) };
      case "keycloak":
        return {
          what: "keycloak",
          crash: await crashAndRestart(
            "keycloak",
            `${need("AUTH_KEYCLOAK_ISSUER")}/.well-known/openid-configuration`,
          ),
        };
    }
  }

  await sleep(cutAt + options.partitionSeconds * 1_000 - Date.now());
  const backlogAtRestore = pool.progressOf(1).backlog;
  leafB.restore();
  const restoredAt = Date.now();
  step(
    `site ${SITES[1]}'s link restored after ${((restoredAt - cutAt) / 1000).toFixed(0)} s; ${backlogAtRestore} reports waiting there`,
  );
  await leafB.untilLinked(true, 60_000).catch((error: unknown) => problems.push(String(error)));
  await Promise.all(pendingReady);

  // --- the end: the rollout completes, site B's backlog drains ---------------------------------------
  const endDeadline = Date.now() + 420_000;
  let rolloutState: Awaited<ReturnType<RolloutFacts["rollout"]>> = {
    status: "unknown",
    batchesStarted: 0,
    finishedAt: null,
  };
  while (Date.now() < endDeadline) {
    rolloutState = await facts.rollout(rollout.id).catch(() => rolloutState);
    if (!["running", "pending", "paused"].includes(rolloutState.status) && pool.progressOf(1).backlog === 0)
      break;
    await sleep(1_000);
  }
  if (rolloutState.status !== "completed")
    problems.push(`the rollout ended ${rolloutState.status}, not completed.`);
  step("30 s more of steady reporting, then the agents stop and the ingest drains");
  await sleep(30_000);
  await pool.stopAgents(allNids);
  const drainDeadline = Date.now() + 120_000;
  while (Date.now() < drainDeadline) {
    const backlog = sampler.last()?.ingestBacklog;
    if (backlog === 0) break;
    await sleep(1_000);
  }
  // The gateways' metrics batches go to Mimir within 500 ms of their last message.
  await sleep(5_000);
  await sampler.stop();
  clearInterval(ticker);
  const loadAtEnd = loadavg()[0] ?? 0;

  // --- the accounts ----------------------------------------------------------------------------------
  step("counting: every acknowledged report in the inventory and in Mimir, every node's updates");
  const deliveries = await pool.deliveries();
  const inventory = await inventoryFacts(databaseUrl, allNids);
  const mimirSamples = await mimirCpuSamples(need("MIMIR_URL"), acme.id, Date.now() - startedAt + 300_000);
  const inventoryWithMimir = { ...inventory, mimirSamples };
  const perSiteAccounts: Record<string, DeliveryAccount> = {};
  for (const [index, site] of SITES.entries()) {
    const mine = deliveries.filter((node: NodeDeliveries) => siteOfNode.get(node.nid) === index);
    perSiteAccounts[site] = accountDeliveries(mine, inventoryWithMimir);
  }
  const rolloutFacts = await facts.since(rollout.startedAt - 1_000);
  const twice = updatedTwice(rolloutFacts, version.id, await pool.updates(), "1.0.0");
  const behind = leftBehind(allNids, await facts.instances(appRow.id), version.id);

  // --- recovery per kill, read off the timeline ------------------------------------------------------
  const samples = sampler.samples;
  const normal = normalLevels(samples.filter((sample) => sample.at < (kills[0]?.at ?? restoredAt)));
  kills.forEach((kill, index) => {
    const windowEnd = Math.min(kills[index + 1]?.at ?? restoredAt, restoredAt);
    const window = samples.filter((sample) => sample.at >= kill.at && sample.at < windowEnd);
    kill.recovery = recoveryAfter({
      window,
      at: kill.at,
      readyAt: kill.readyAt,
      normal,
      rolloutActive: kill.rolloutBatchesAtKill !== null,
    });
    kill.deliveries = accountDeliveries(deliveries, inventoryWithMimir, {
      from: kill.at - 10_000,
      to: windowEnd,
    });
    kill.seen = failuresSeen(window);
    kill.observations = firstObservations(sampler.observations, kill.at, windowEnd);
  });
  const afterRestore = samples.filter((sample) => sample.at >= restoredAt);
  const partition: PartitionRecord = {
    site: SITES[1],
    cutAt,
    restoredAt,
    backlogAtRestore,
    drainedSeconds: healedAfter(
      afterRestore,
      restoredAt,
      (sample) => sample.agentBacklog[1] <= normal.agentBacklog,
    ),
    ingestedSeconds: healedAfter(afterRestore, restoredAt, (sample) =>
      sample.ingestBacklog === null ? null : sample.ingestBacklog <= normal.ingestBacklog,
    ),
  };

  const results: HaBenchResults = {
    command: options.command,
    commit: gitCommit(REPO_ROOT),
    natsVersion: await serverVersion(list("NATS_MONITOR_URL")[0] as string).catch(() => "unknown"),
    machine: describeMachine(),
    loadAverage: [loadAtStart, loadAtEnd],
    config: {
      nodes: allNids.length,
      sites: [...SITES],
      natsNodes: list("NATS_URL").length,
      gateways: REPLICAS,
      consoles: REPLICAS,
      metricsIntervalS: options.metricsIntervalS,
      statusRefreshS: options.statusRefreshS,
      partitionSeconds: options.partitionSeconds,
      killSpacingSeconds: options.killSpacingSeconds,
      rolloutBatches: ROLLOUT_BATCHES_SITE_A + 1,
    },
    startedAt,
    kills,
    partition,
    rollout: {
      nodes: allNids.length,
      status: rolloutState.status,
      startedAt: rollout.startedAt,
      finishedAt: rolloutState.finishedAt,
      batches: rolloutState.batchesStarted,
      updatedTwice: twice,
      leftBehind: behind.length,
      leftBehindExamples: behind.slice(0, 5),
      runningSeries: runningSeries(rolloutFacts, version.id, rollout.startedAt),
    },
    deliveries: { perSite: perSiteAccounts, total: sumAccounts(Object.values(perSiteAccounts)) },
    timeline: samples,
    problems,
    notes: options.notes,
  };
  mkdirSync(VAR_DIR, { recursive: true });
  writeFileSync(join(VAR_DIR, RESULTS), `${JSON.stringify(results, null, 2)}\n`);
  const report = await writeReport(results, outDir);
  printSummary(results);
  for (const problem of problems) process.stdout.write(`  ! ${problem}\n`);
  process.stdout.write(`\nReport: ${relative(REPO_ROOT, report)}\n`);
}

async function withPg<T>(databaseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A version whose artifact is random bytes, uploaded through the gateway as the console's upload is. */
async function uploadVersion(
  db: Db,
  gatewayUrl: string,
  token: string,
  organizationId: string,
  appId: string,
) {
  const body = randomBytes(ARTIFACT_BYTES);
  const sha256 = createHash("sha256").update(body).digest("hex");
  const response = await fetch(`${gatewayUrl}/internal/orgs/${organizationId}/artifacts`, {
    method: "PUT",
    headers: {
      authorization: `Bearer ${token}`,
      "x-artifact-sha256": sha256,
      "content-length": String(body.length),
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
      version: "1.0.0",
      artifactSource: "upload",
      artifactState: "ready",
      artifactSha256: sha256,
      artifactSize: BigInt(body.length),
      runSpec: { command: ["sleep", "1000000"] },
    },
  });
}

/**
 * Site A in small batches with timed pauses (so the rollout is under way through every kill), then
 * site B, whose nodes are offline behind the cut link: the batch waits for them.
 */
async function startRollout(
  db: Db,
  organizationId: string,
  appId: string,
  versionId: string,
  siteANodes: number,
) {
  const system = { type: "system" as const, id: "bench-ha" };
  const perBatch = Math.max(1, Math.ceil(siteANodes / ROLLOUT_BATCHES_SITE_A));
  const strategy = rolloutStrategySchema.parse({
    batches: [
      ...Array.from({ length: ROLLOUT_BATCHES_SITE_A }, () => ({
        selector: "hasite=a",
        limit: { count: perBatch },
        pauseAfter: { seconds: ROLLOUT_PAUSE_SECONDS },
      })),
      { selector: "hasite=b", offline: "wait", waitSeconds: 3_600, afterWait: "fail" },
    ],
    defaults: { successThreshold: 100, timeoutSeconds: 900, offline: "skip" },
    onBatchFailure: "pause",
  });
  const id = await db.$transaction(
    (tx) =>
      insertRollout(tx, {
        organizationId,
        appId,
        appVersionId: versionId,
        selector: "ha=fleet",
        siteIds: [],
        strategy,
        versionLabel: "1.0.0",
        actor: system,
      }),
    { maxWait: 15_000, timeout: 120_000 },
  );
  const startedAt = Date.now();
  const started = await db.$transaction(
    (tx) => actOnRollout(tx, organizationId, id, { type: "start" }, system),
    {
      maxWait: 15_000,
      timeout: 120_000,
    },
  );
  if (!started.ok) throw new Error(`the rollout did not start: ${JSON.stringify(started)}`);
  return { id, startedAt };
}

async function inventoryFacts(databaseUrl: string, nids: readonly string[]) {
  return withPg(databaseUrl, async (client) => {
    const applied = await client.query<{ node_id: string; seq: string }>(
      "SELECT node_id::text, seq FROM bench_ha_status WHERE node_id = ANY($1::uuid[]) ORDER BY at",
      [nids],
    );
    const statusApplied = new Map<string, number[]>();
    for (const row of applied.rows) {
      const list = statusApplied.get(row.node_id) ?? [];
      list.push(Number(row.seq));
      statusApplied.set(row.node_id, list);
    }
    const final = await client.query<{ id: string; seq: string }>(
      "SELECT id::text, status_seq AS seq FROM node WHERE id = ANY($1::uuid[])",
      [nids],
    );
    return {
      statusApplied,
      finalStatusSeq: new Map(final.rows.map((row) => [row.id, Number(row.seq)])),
    };
  });
}

/** Every raw CPU sample of the organization's nodes in Mimir over the run (ms timestamps), per node. */
async function mimirCpuSamples(
  mimirUrl: string,
  tenant: string,
  windowMs: number,
): Promise<Map<string, number[]>> {
  const minutes = Math.ceil(windowMs / 60_000);
  const query = `edgefleet_node_cpu_usage_ratio[${minutes}m]`;
  const response = await fetch(`${mimirUrl}/prometheus/api/v1/query?query=${encodeURIComponent(query)}`, {
    headers: { "X-Scope-OrgID": tenant },
    signal: AbortSignal.timeout(60_000),
  });
  if (!response.ok) throw new Error(`Mimir answered HTTP ${response.status}: ${await response.text()}`);
  const body = (await response.json()) as {
    data: { result: Array<{ metric: Record<string, string>; values: Array<[number, string]> }> };
  };
  const samples = new Map<string, number[]>();
  for (const series of body.data.result) {
    const node = series.metric.node;
    if (!node) continue;
    const list = samples.get(node) ?? [];
    for (const [seconds] of series.values) list.push(Math.round(seconds * 1000));
    samples.set(node, list);
  }
  return samples;
}

function printLine(sampler: TimelineSampler, nodes: number): void {
  const sample = sampler.last();
  if (!sample) return;
  const code = (status: number | null) => (status === null ? "---" : String(status));
  process.stdout.write(
    `  gw ${sample.gateways.map(code).join("/")}  console ${sample.consoles.map(code).join("/")}  kc ${code(sample.keycloak)}` +
      `  agents waiting A ${sample.agentBacklog[0]} B ${sample.agentBacklog[1]}  EF_UP ${sample.ingestBacklog ?? "?"}` +
      `  online ${sample.online ?? "?"}/${nodes}  running ${sample.running ?? "?"}  load ${sample.loadAverage.toFixed(1)}\n`,
  );
}

function printSummary(results: HaBenchResults): void {
  const row = (what: string, value: string) => process.stdout.write(`  ${what.padEnd(36)} ${value}\n`);
  const seconds = (value: number | null) => (value === null ? "not recovered" : `${value.toFixed(1)} s`);
  for (const kill of results.kills)
    row(`kill -9 ${kill.what}`, `recovered in ${seconds(kill.recovery.overall)}`);
  const { status, metrics, evicted } = results.deliveries.total;
  row(
    "status reports acked / applied",
    `${status.acked} / ${status.applied} (superseded ${status.superseded})`,
  );
  row("status lost / applied twice", `${status.lost} / ${status.appliedTwice}`);
  row("metrics acked / in Mimir", `${metrics.acked} / ${metrics.inMimir}`);
  row("metrics lost / duplicated", `${metrics.lost} / ${metrics.duplicated}`);
  row("evicted at the edge", String(evicted));
  row(
    "nodes updated twice / left behind",
    `${results.rollout.updatedTwice.nodes} / ${results.rollout.leftBehind}`,
  );
  row(
    `site ${results.partition.site} backlog after the cut`,
    `${results.partition.backlogAtRestore} reports, delivered in ${seconds(results.partition.drainedSeconds)}`,
  );
}

async function writeReport(results: HaBenchResults, outDir: string): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, RESULTS), `${JSON.stringify(results, null, 2)}\n`);
  const charts = await writeHaCharts(results, outDir);
  const file = join(outDir, "ha-chaos.md");
  writeFileSync(file, renderHaReport(results, charts));
  return file;
}
