import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join, relative, resolve } from "node:path";
import { createEnrollmentToken, createPrismaClient, type Db } from "@edgefleet/db";
import { type Cleanup, runWithCleanup } from "../interrupt.js";
import { describeMachine, gitCommit } from "../machine.js";
import { PgEvents } from "../pg-events.js";
import { Progress, step } from "../progress.js";
import {
  benchStackRunning,
  GatewayProcess,
  LOG_DIR,
  migrate,
  PROFILE,
  REPO_ROOT,
  stackDown,
  stackUp,
} from "../stack.js";
import { WorkerPool } from "../workers.js";
import {
  firstFiringByNode,
  firstZeroAfter,
  groupWaits,
  livenessBound,
  type NodePath,
  summarizePaths,
} from "./measure.js";
import { WebhookReceiver } from "./receiver.js";
import { type AlertsResults, RESULTS, writeAlertsReport } from "./report.js";

export interface AlertsOptions {
  nodes: number;
  forMinutes: number;
  staggerSeconds: number;
  maxMinutes: number;
  outDir: string;
  renderOnly: boolean;
  command: string;
}

const NAME_PREFIX = "alerts";
/** The gateway's defaults (apps/gateway/src/env.ts): the benchmark measures what an install gets. */
const HEARTBEAT_INTERVAL_S = 30;
const LIVENESS_FLUSH_MS = 2_000;
const SERIES_INTERVAL_MS = 30_000;
const EVALUATION_INTERVAL_S = 30;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runAlertsBench(options: AlertsOptions): Promise<void> {
  const outDir = resolve(REPO_ROOT, options.outDir);
  if (options.renderOnly) {
    await writeAlertsReport(JSON.parse(readFileSync(join(outDir, RESULTS), "utf8")) as AlertsResults, outDir);
    return;
  }
  await runWithCleanup((cleanup) => run(options, outDir, cleanup));
}

async function run(options: AlertsOptions, outDir: string, cleanup: Cleanup): Promise<void> {
  const deadline = Date.now() + options.maxMinutes * 60_000;
  const remaining = () => deadline - Date.now();
  if (benchStackRunning())
    throw new Error(
      `a ${PROFILE} stack is already running; stop it first: EDGEFLEET_PROFILE=${PROFILE} ./edgefleet down`,
    );
  step(`starting the ${PROFILE} stack without Keycloak (logs in ${relative(REPO_ROOT, LOG_DIR)})`);
  const stackStarting = stackUp({ keycloak: false });
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
  const mimirUrl = need("MIMIR_URL");
  need("GATEWAY_ALERT_RELAY_SECRET");
  migrate(env);
  const events = await PgEvents.open(need("DATABASE_URL"));
  cleanup.add("close Postgres (events)", () => events.close());
  const db: Db = createPrismaClient(need("DATABASE_URL"));
  cleanup.add("close Prisma", () => db.$disconnect());

  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  const receiver = await WebhookReceiver.start(secret);
  cleanup.add("close the webhook receiver", () => receiver.close());

  // Organization, policy and channel in one transaction: the reconciler's first pass for the new
  // organization uploads its rule group and Alertmanager config together.
  const { organization, policy } = await db.$transaction(async (tx) => {
    const organization = await tx.organization.create({
      data: { slug: `bench-alerts-${Date.now()}`, name: "Alert latency benchmark" },
    });
    const policy = await tx.alertPolicy.create({
      data: {
        organizationId: organization.id,
        name: `nodes offline for ${options.forMinutes} min`,
        kind: "node_offline",
        spec: { kind: "node_offline", forMinutes: options.forMinutes },
        selector: "bench=alerts",
        severity: "critical",
      },
    });
    await tx.alertChannel.create({
      data: {
        organizationId: organization.id,
        name: "benchmark receiver",
        kind: "webhook",
        target: receiver.url,
        secret,
      },
    });
    return { organization, policy };
  });
  const mimir = async (path: string) => {
    const response = await fetch(new URL(path, mimirUrl), {
      headers: { "X-Scope-OrgID": organization.id },
      signal: AbortSignal.timeout(15_000),
    });
    if (!response.ok) throw new Error(`Mimir ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as { data: unknown };
  };
  const instant = async (query: string) => {
    const answer = await mimir(`/prometheus/api/v1/query?query=${encodeURIComponent(query)}`);
    return (answer.data as { result: Array<{ metric: Record<string, string>; value?: [number, string] }> })
      .result;
  };

  // Loopback receiver: the gateway must be allowed to deliver to a private address (tests only).
  const gateway = await GatewayProcess.start(env, { GATEWAY_ALERT_WEBHOOK_ALLOW_PRIVATE: "true" });
  cleanup.add("stop the gateway", () => gateway.stop());
  step(`gateway ready at ${gateway.url}; receiver at ${receiver.url}`);

  const { token } = await createEnrollmentToken(db, organization.id, {
    expiresAt: new Date(Date.now() + 3_600_000),
    maxUses: options.nodes,
    labels: { bench: "alerts" },
    description: "benchmark: hollow fleet for alert latency",
  });
  const pool = await WorkerPool.start(1, LOG_DIR);
  cleanup.add("stop the hollow agents", () => pool.stop());
  const enrollProgress = new Progress("enroll", options.nodes);
  const enrollTicker = setInterval(() => enrollProgress.update(pool.totals().enrolled), 500);
  const enrolled = await pool
    .enroll(options.nodes, {
      token,
      natsUrl: need("NATS_URL"),
      enrollCreds: await readFile(need("NATS_ENROLL_CREDS"), "utf8"),
      namePrefix: NAME_PREFIX,
      concurrency: 16,
    })
    .finally(() => clearInterval(enrollTicker));
  enrollProgress.finish(`${enrolled.nodes.length} nodes`);
  if (enrolled.nodes.length === 0) throw new Error(`no node enrolled: ${enrolled.firstError ?? "?"}`);

  const connectStart = Date.now();
  const onlineProgress = new Progress("online", enrolled.nodes.length);
  const starting = pool.connect(100, 32);
  let online = 0;
  while (remaining() > 0) {
    online = await events.countSince("node:online", connectStart);
    onlineProgress.update(online);
    if (online >= enrolled.nodes.length) break;
    await sleep(500);
  }
  await starting;
  onlineProgress.finish(`${online} online after ${((Date.now() - connectStart) / 1000).toFixed(1)} s`);

  // Ready means: the ruler has loaded the policy's rule and Mimir holds a 1 for every node.
  step("waiting for the rule group in the ruler and every node's liveness series in Mimir");
  const readyStart = Date.now();
  let ruleLoaded = false;
  let seriesOnline = 0;
  const readyProgress = new Progress("series", enrolled.nodes.length);
  while (remaining() > 0) {
    const rules = (await mimir("/prometheus/api/v1/rules").catch(() => ({ data: { groups: [] } }))).data as {
      groups: Array<{ rules: Array<{ name: string }> }>;
    };
    ruleLoaded = rules.groups.some((group) =>
      group.rules.some((rule) => rule.name === "EdgefleetNodeOffline"),
    );
    const count = await instant("count(edgefleet_node_online{} == 1) or vector(0)").catch(() => []);
    seriesOnline = Number(count[0]?.value?.[1] ?? 0);
    readyProgress.update(seriesOnline, ruleLoaded ? "rule loaded" : "rule not loaded yet");
    if (ruleLoaded && seriesOnline >= online) break;
    await sleep(2_000);
  }
  readyProgress.finish(
    `${seriesOnline} nodes at 1, rule ${ruleLoaded ? "loaded" : "NOT loaded"} after ${((Date.now() - readyStart) / 1000).toFixed(0)} s`,
  );
  if (!ruleLoaded) throw new Error("the ruler never loaded the policy's rule group (see bench-gateway.log)");
  // The group wait in effect is what the gateway uploaded, whatever the docs say.
  const groupWait = await fetch(new URL("/api/v1/alerts", mimirUrl), {
    headers: { "X-Scope-OrgID": organization.id },
    signal: AbortSignal.timeout(15_000),
  })
    .then((response) => response.text())
    .then((config) => groupWaits(config))
    .catch(() => "unknown");

  // --- stop the fleet -------------------------------------------------------------------------------
  const nids = enrolled.nodes.map((node) => node.nid);
  step(
    options.staggerSeconds > 0
      ? `stopping ${nids.length} agents over ${options.staggerSeconds} s`
      : `stopping ${nids.length} agents at once`,
  );
  const stopStart = Date.now();
  const stops = new Map<string, number>();
  if (options.staggerSeconds > 0) {
    const gapMs = (options.staggerSeconds * 1000) / nids.length;
    for (const [index, nid] of nids.entries()) {
      await sleep(Math.max(0, stopStart + index * gapMs - Date.now()));
      for (const time of await pool.stopAgents([nid])) stops.set(time.nid, time.at);
    }
  } else {
    for (const time of await pool.stopAgents(nids)) stops.set(time.nid, time.at);
  }

  const liveness = livenessBound(HEARTBEAT_INTERVAL_S, LIVENESS_FLUSH_MS);
  const forMs = options.forMinutes * 60_000;
  // Generous: liveness, for, then every interval of the path twice, and five minutes of slack.
  const waitUntil = Math.min(
    deadline,
    stopStart +
      options.staggerSeconds * 1000 +
      liveness.boundMs +
      forMs +
      2 * (SERIES_INTERVAL_MS + EVALUATION_INTERVAL_S * 1000) +
      300_000,
  );
  const alertProgress = new Progress("alerts", stops.size);
  while (Date.now() < waitUntil) {
    const delivered = firstFiringByNode(receiver.received, policy.id);
    const offline = await events.countSince("node:offline", stopStart);
    alertProgress.update(delivered.size, `offline in Postgres ${offline}/${stops.size}`);
    if ([...stops.keys()].every((nid) => delivered.has(nid))) break;
    await sleep(1_000);
  }
  const delivered = firstFiringByNode(receiver.received, policy.id);
  alertProgress.finish(`${delivered.size} of ${stops.size} alerts delivered`);

  // --- collect the path of every node ---------------------------------------------------------------
  const offlineAt = new Map(
    (await events.eventsSince("node:offline", stopStart)).map((event) => [event.nid, event.at] as const),
  );
  const window = Math.ceil((Date.now() - stopStart) / 60_000) + 2;
  const series = await instant(`edgefleet_node_online[${window}m]`).then(
    (result) =>
      result as unknown as Array<{ metric: Record<string, string>; values: Array<[number, string]> }>,
  );
  const zeroAt = new Map<string, number>();
  for (const one of series) {
    const node = one.metric.node;
    const stoppedAt = node ? stops.get(node) : undefined;
    if (!node || stoppedAt === undefined) continue;
    const at = firstZeroAfter(one.values, stoppedAt);
    if (at !== undefined) zeroAt.set(node, at);
  }
  const relayed = new Map<string, number>();
  const rows = await db.alertNotification.findMany({
    where: { organizationId: organization.id, alertStatus: "firing" },
    select: { alert: true, createdAt: true },
    orderBy: { createdAt: "asc" },
  });
  for (const row of rows) {
    const node = (row.alert as { labels?: Record<string, string> }).labels?.node;
    if (node && !relayed.has(node)) relayed.set(node, row.createdAt.getTime());
  }
  const paths: NodePath[] = [...stops].map(([node, stoppedAt]) => ({
    node,
    stoppedAt,
    offlineAt: offlineAt.get(node),
    seriesZeroAt: zeroAt.get(node),
    firedAt: delivered.get(node)?.firedAt,
    relayedAt: relayed.get(node),
    deliveredAt: delivered.get(node)?.deliveredAt,
  }));
  const summary = summarizePaths(paths, forMs, liveness.boundMs);

  const notes: string[] = [];
  if (receiver.rejected > 0) notes.push(`${receiver.rejected} webhook(s) failed the signature check.`);
  if (summary.delivered < summary.stopped)
    notes.push(`${summary.stopped - summary.delivered} node(s) had no alert by the end of the wait.`);
  const results: AlertsResults = {
    command: options.command,
    profile: PROFILE,
    commit: gitCommit(REPO_ROOT),
    machine: describeMachine(),
    loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
    at: new Date().toISOString(),
    nodes: enrolled.nodes.length,
    online,
    forMinutes: options.forMinutes,
    staggerSeconds: options.staggerSeconds,
    intervals: {
      heartbeatS: HEARTBEAT_INTERVAL_S,
      offlineAfterMs: liveness.offlineAfterMs,
      sweepIntervalMs: liveness.sweepIntervalMs,
      livenessBoundMs: liveness.boundMs,
      seriesIntervalMs: SERIES_INTERVAL_MS,
      evaluationIntervalS: EVALUATION_INTERVAL_S,
      groupWait,
      deliveryPollMs: 1_000,
    },
    webhooks: receiver.received.length,
    rejectedWebhooks: receiver.rejected,
    summary,
    paths: paths.map((path) => ({
      node: path.node,
      stoppedAt: path.stoppedAt,
      offlineMs: relativeTo(path, "offlineAt"),
      seriesZeroMs: relativeTo(path, "seriesZeroAt"),
      firedMs: relativeTo(path, "firedAt"),
      relayedMs: relativeTo(path, "relayedAt"),
      deliveredMs: relativeTo(path, "deliveredAt"),
    })),
    notes,
  };
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, RESULTS), `${JSON.stringify(results, null, 2)}\n`);
  await writeAlertsReport(results, outDir);
}

function relativeTo(
  path: NodePath,
  key: "offlineAt" | "seriesZeroAt" | "firedAt" | "relayedAt" | "deliveredAt",
) {
  const at = path[key];
  return at === undefined ? null : at - path.stoppedAt;
}
