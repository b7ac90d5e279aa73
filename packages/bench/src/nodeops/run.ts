import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join, relative, resolve } from "node:path";
import { formatWireId } from "@edgefleet/agent-sdk/protocol";
import { createEnrollmentToken, createPrismaClient, type Db, setDesiredApps } from "@edgefleet/db";
import { connect, credsAuthenticator } from "@nats-io/transport-node";
import type { TopLevelSpec } from "vega-lite";
import { renderSvg } from "../charts.js";
import { type Cleanup, runWithCleanup } from "../interrupt.js";
import { describeMachine, gitCommit, type MachineInfo } from "../machine.js";
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
import { type LatencySummary, summarize } from "../stats.js";
import { WorkerPool } from "../workers.js";

export interface NodeOpsOptions {
  nodes: number;
  hollowProcesses: number;
  concurrency: number;
  idleSeconds: number;
  outDir: string;
  renderOnly: boolean;
  command: string;
}

export interface NodeOpsResults {
  command: string;
  profile: string;
  commit: string;
  machine: MachineInfo;
  loadAverage: number[];
  at: string;
  nodes: number;
  online: number;
  single: {
    concurrency: number;
    ok: number;
    failed: number;
    wallMs: LatencySummary | null;
    gatewayMs: LatencySummary | null;
    seconds: number;
    firstError: string | null;
  };
  bulk: {
    batch: number;
    ok: number;
    failed: number;
    gatewayMs: LatencySummary | null;
    callMs: LatencySummary | null;
  };
  idleLog: {
    seconds: number;
    polls: number;
    down: { messages: number; bytes: number };
    up: { messages: number; bytes: number };
    bytesPerMinute: number;
    messagesPerMinute: number;
    endReason: string | null;
  };
  samples: number[];
  notes: string[];
}

/** NATS framing per message on the wire (verb, sid, sizes, CRLFs), as the agents count it. */
const FRAMING_BYTES = 20;
const NAME_PREFIX = "nodeops";
const RESULTS = "nodeops-results.json";

export async function runNodeOpsBench(options: NodeOpsOptions): Promise<void> {
  const outDir = resolve(REPO_ROOT, options.outDir);
  if (options.renderOnly) {
    await writeReport(JSON.parse(readFileSync(join(outDir, RESULTS), "utf8")) as NodeOpsResults, outDir);
    return;
  }
  await runWithCleanup((cleanup) => run(options, outDir, cleanup));
}

async function run(options: NodeOpsOptions, outDir: string, cleanup: Cleanup): Promise<void> {
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
  migrate(env);
  const events = await PgEvents.open(need("DATABASE_URL"));
  cleanup.add("close Postgres (events)", () => events.close());
  const db: Db = createPrismaClient(need("DATABASE_URL"));
  cleanup.add("close Prisma", () => db.$disconnect());
  // Bulk calls of 100 nodes: the organization limit must let a whole batch through.
  const gateway = await GatewayProcess.start(env, { GATEWAY_COMMANDS_PER_ORG: "128" });
  cleanup.add("stop the gateway", () => gateway.stop());
  step(`gateway ready at ${gateway.url}`);
  const internal = async (path: string, body: unknown, timeoutMs = 30_000) => {
    const response = await fetch(`${gateway.url}/internal/${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${need("GATEWAY_INTERNAL_TOKEN")}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return (await response.json()) as Record<string, unknown>;
  };

  const organization = await db.organization.create({
    data: { slug: `bench-nodeops-${Date.now()}`, name: "Node operations benchmark" },
  });
  const { token } = await createEnrollmentToken(db, organization.id, {
    expiresAt: new Date(Date.now() + 6 * 3_600_000),
    maxUses: options.nodes,
    labels: { bench: "nodeops" },
    description: "benchmark: hollow fleet for node operations",
  });

  step(`forking ${options.hollowProcesses} hollow-agent processes`);
  const pool = await WorkerPool.start(options.hollowProcesses, LOG_DIR);
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
  const connectStart = Date.now();
  const connectProgress = new Progress("online", enrolled.nodes.length);
  const starting = pool.connect(200, 64);
  let online = 0;
  while (Date.now() < connectStart + 600_000) {
    online = await events.countSince("node:online", connectStart);
    connectProgress.update(online);
    if (online >= enrolled.nodes.length) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await starting;
  connectProgress.finish(`${online} online after ${((Date.now() - connectStart) / 1000).toFixed(1)} s`);
  const nodeRows = await db.node.findMany({
    where: { organizationId: organization.id, status: "online" },
    select: { id: true, wireId: true },
    orderBy: { name: "asc" },
  });
  const notes: string[] = [];

  // --- command round trip, one node per call ----------------------------------------------------
  step(`command round trip: one report per node, ${options.concurrency} calls at once`);
  const wall: number[] = [];
  const gatewayMs: number[] = [];
  let failed = 0;
  let firstError: string | null = null;
  const queue = nodeRows.map((node) => node.id);
  const singleStart = Date.now();
  const progress = new Progress("commands", queue.length);
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      for (let nodeId = queue.shift(); nodeId !== undefined; nodeId = queue.shift()) {
        const started = performance.now();
        const answer = await internal(`orgs/${organization.id}/node-commands`, {
          nodeIds: [nodeId],
          cmd: "report",
          timeoutMs: 10_000,
        }).catch((error: unknown): Record<string, unknown> => ({ error: String(error) }));
        const elapsed = performance.now() - started;
        const result = (
          answer.results as Array<{ ok: boolean; ms: number; error?: string }> | undefined
        )?.[0];
        if (result?.ok) {
          wall.push(elapsed);
          gatewayMs.push(result.ms);
        } else {
          failed++;
          firstError ??= result?.error ?? String(answer.error ?? "no answer");
        }
        progress.update(wall.length + failed);
      }
    }),
  );
  const singleSeconds = (Date.now() - singleStart) / 1000;
  progress.finish(`${wall.length} ok, ${failed} failed in ${singleSeconds.toFixed(1)} s`);

  // --- bulk: 100 nodes per call ------------------------------------------------------------------
  step("bulk: report on 100 nodes per call");
  const bulkMs: number[] = [];
  const bulkCalls: number[] = [];
  let bulkFailed = 0;
  for (let index = 0; index < nodeRows.length; index += 100) {
    const started = performance.now();
    const answer = await internal(`orgs/${organization.id}/node-commands`, {
      nodeIds: nodeRows.slice(index, index + 100).map((node) => node.id),
      cmd: "report",
      timeoutMs: 15_000,
    });
    bulkCalls.push(performance.now() - started);
    for (const result of (answer.results as Array<{ ok: boolean; ms: number }> | undefined) ?? []) {
      if (result.ok) bulkMs.push(result.ms);
      else bulkFailed++;
    }
  }

  // --- an idle log session ------------------------------------------------------------------------
  step(`idle log session: ${options.idleSeconds} s of polling a silent app`);
  const target = nodeRows[0];
  if (!target) throw new Error("no node came online");
  const app = await db.app.create({ data: { organizationId: organization.id, name: "quiet" } });
  const version = await db.appVersion.create({
    data: {
      organizationId: organization.id,
      appId: app.id,
      version: "1.0.0",
      artifactUrl: "builtin:quiet",
      runSpec: { command: ["sleep", "infinity"] },
    },
  });
  await setDesiredApps(db, organization.id, target.id, { put: [version.id] });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const instance = await db.appInstance.findFirst({ where: { nodeId: target.id, appId: app.id } });
    if (instance?.state === "running") break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const platform = await connect({
    servers: need("NATS_URL"),
    authenticator: credsAuthenticator(await readFile(need("NATS_CREDS"))),
  });
  cleanup.add("close NATS", () => platform.close());
  const org = formatWireId(organization.wireId);
  const wid = formatWireId(target.wireId);
  const counted = { down: { messages: 0, bytes: 0 }, up: { messages: 0, bytes: 0 } };
  let counting = false;
  const count = (key: "down" | "up") => (subject: string, size: number) => {
    if (!counting) return;
    counted[key].messages++;
    counted[key].bytes += subject.length + size + FRAMING_BYTES;
  };
  const countDown = count("down");
  const countUp = count("up");
  platform.subscribe(`ef.t.${org}.down.${wid}`, {
    callback: (_e, msg) => countDown(msg.subject, msg.data.byteLength),
  });
  platform.subscribe(`ef.t.${org}.up.${wid}.cmd`, {
    callback: (_e, msg) => countUp(msg.subject, msg.data.byteLength),
  });
  await platform.flush();
  const opened = (await internal(`orgs/${organization.id}/log-sessions`, {
    nodeId: target.id,
    app: "quiet",
    tail: 0,
  })) as { ok: boolean; poll?: { sessionId: string }; error?: string };
  if (!opened.ok || !opened.poll) throw new Error(`cannot open a log session: ${opened.error}`);
  const sessionId = opened.poll.sessionId;
  counting = true;
  const idleStart = Date.now();
  let polls = 0;
  let endReason: string | null = null;
  while (Date.now() < idleStart + options.idleSeconds * 1000) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const answer = (await internal(`orgs/${organization.id}/log-sessions/${sessionId}/poll`, {})) as {
      poll?: { ended: boolean; endReason: string | null };
    };
    polls++;
    if (answer.poll?.ended) {
      endReason = answer.poll.endReason;
      break;
    }
  }
  counting = false;
  const idleSeconds = (Date.now() - idleStart) / 1000;
  await internal(`orgs/${organization.id}/log-sessions/${sessionId}/close`, {});
  const totalBytes = counted.down.bytes + counted.up.bytes;
  const totalMessages = counted.down.messages + counted.up.messages;
  if (endReason) notes.push(`The idle session ended early: ${endReason}.`);

  const results: NodeOpsResults = {
    command: options.command,
    profile: PROFILE,
    commit: gitCommit(REPO_ROOT),
    machine: describeMachine(),
    loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
    at: new Date().toISOString(),
    nodes: enrolled.nodes.length,
    online,
    single: {
      concurrency: options.concurrency,
      ok: wall.length,
      failed,
      wallMs: summarize(wall),
      gatewayMs: summarize(gatewayMs),
      seconds: Math.round(singleSeconds * 10) / 10,
      firstError,
    },
    bulk: {
      batch: 100,
      ok: bulkMs.length,
      failed: bulkFailed,
      gatewayMs: summarize(bulkMs),
      callMs: summarize(bulkCalls),
    },
    idleLog: {
      seconds: Math.round(idleSeconds),
      polls,
      down: counted.down,
      up: counted.up,
      bytesPerMinute: Math.round((totalBytes * 60) / idleSeconds),
      messagesPerMinute: Math.round((totalMessages * 60 * 10) / idleSeconds) / 10,
      endReason,
    },
    samples: wall.map((ms) => Math.round(ms * 10) / 10),
    notes,
  };
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, RESULTS), `${JSON.stringify(results, null, 2)}\n`);
  await writeReport(results, outDir);
}

const round = (ms: number | undefined) =>
  ms === undefined ? "—" : ms < 10 ? ms.toFixed(1) : Math.round(ms).toString();

async function writeReport(results: NodeOpsResults, outDir: string): Promise<void> {
  const spec: TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: 640,
    height: 240,
    title: `Command round trip, one node per call (${results.single.ok} nodes, ${results.single.concurrency} at once)`,
    data: { values: results.samples.map((ms) => ({ ms })) },
    mark: "bar",
    encoding: {
      x: { field: "ms", bin: { maxbins: 40 }, title: "round trip, ms (HTTP → gateway → NATS → node → back)" },
      y: { aggregate: "count", title: "calls" },
    },
  };
  await writeFile(join(outDir, "nodeops-round-trip.svg"), await renderSvg(spec));
  const s = results.single;
  const b = results.bulk;
  const i = results.idleLog;
  const markdown = `# Node operations: command round trip and the cost of an idle log session

Measured by \`${results.command}\` on ${results.at.slice(0, 16).replace("T", " ")} UTC (commit \`${results.commit.slice(0, 10)}\`,
stack profile \`${results.profile}\`), ${results.machine.cores} cores shared with other work (load average at the end:
${results.loadAverage.join(", ")}). ${results.online} of ${results.nodes} hollow agents (real protocol and credentials, one NATS
connection each, simulated runtime) online on the profile's hub; the gateway started by the benchmark.
Raw numbers: [\`${RESULTS}\`](${RESULTS}).

## Command round trip

One \`report\` command per node through the gateway's internal API, as the console's API calls it
(HTTP → gateway → NATS \`ef.t.<org>.down.<wid>\` → agent → \`ef.up.<wid>.cmd\` → gateway → HTTP),
${s.concurrency} calls at once. "Wall" is the caller's time; "gateway" is what the gateway measured from
the request to the node's reply.

| | calls ok | failed | p50 ms | p90 ms | p99 ms | max ms |
|---|---:|---:|---:|---:|---:|---:|
| wall, one node per call | ${s.ok} | ${s.failed} | ${round(s.wallMs?.p50)} | ${round(s.wallMs?.p90)} | ${round(s.wallMs?.p99)} | ${round(s.wallMs?.max)} |
| gateway, one node per call | ${s.ok} | ${s.failed} | ${round(s.gatewayMs?.p50)} | ${round(s.gatewayMs?.p90)} | ${round(s.gatewayMs?.p99)} | ${round(s.gatewayMs?.max)} |
| gateway, per node in bulk calls of ${b.batch} | ${b.ok} | ${b.failed} | ${round(b.gatewayMs?.p50)} | ${round(b.gatewayMs?.p90)} | ${round(b.gatewayMs?.p99)} | ${round(b.gatewayMs?.max)} |
| wall, per bulk call of ${b.batch} | ${b.callMs?.count ?? 0} | — | ${round(b.callMs?.p50)} | ${round(b.callMs?.p90)} | ${round(b.callMs?.p99)} | ${round(b.callMs?.max)} |

${s.ok} single calls took ${s.seconds} s in all.${s.firstError ? ` First failure: ${s.firstError}.` : ""}

![round trip histogram](nodeops-round-trip.svg)

## An idle log session

A log session on an app that writes nothing, its viewer polling every second for ${i.seconds} s: every
message on the node's downlink and command uplink counted on the hub (subject, payload and
~${FRAMING_BYTES} bytes of NATS framing each). What remains is the session's keepalive (a zero
credit every 10 s, so the node's 30 s lease never lapses while somebody watches): the viewer's polls
stay between the console and the gateway.

| | messages | bytes |
|---|---:|---:|
| down (gateway → node) | ${i.down.messages} | ${i.down.bytes} |
| up (node → gateway) | ${i.up.messages} | ${i.up.bytes} |
| **per minute** | **${i.messagesPerMinute}** | **${i.bytesPerMinute}** |

## Reading the numbers

- The machine was far from idle: its 2 cores were shared with other agents' builds and test
  stacks (load average ${results.loadAverage[0]} at the end), so these are upper bounds; most of a
  round trip is waiting for a core. The gateway's own measure (request published to reply heard)
  is the part NATS and the agent add; the rest of "wall" is the HTTP call, the gateway's inventory
  lookup and the caller's own scheduling.
- \`report\` is not free on the node: it queues a status and a metrics report into JetStream, which
  the gateway then ingests into Postgres and Mimir. A bulk call of 100 asks 100 nodes at once, so
  its per-node times include 100 reports being written at the same moment: the cost of a bulk
  call is its wall time (one call for 100 nodes), not 100 single round trips.
- The idle session costs only its keepalive: about ${Math.round(i.bytesPerMinute)} bytes a minute on the node's
  link, nothing from the node. The viewer's once-a-second polls never reach the node.
${results.notes.map((note) => `- ${note}`).join("\n")}
`;
  await writeFile(join(outDir, "nodeops.md"), markdown);
  step(`wrote ${relative(REPO_ROOT, join(outDir, "nodeops.md"))}`);
}
