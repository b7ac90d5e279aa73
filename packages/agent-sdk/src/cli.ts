import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { Agent } from "./agent/agent.js";
import { DiskOutbox } from "./agent/disk-outbox.js";
import { FileStateStore } from "./agent/state-store.js";
import { type AgentConfig, ConfigError, loadConfig } from "./config.js";
import { EnrollmentRejectedError, enroll } from "./enroll/enroll.js";
import { credsPath, loadIdentity, type NodeIdentity, saveIdentity } from "./enroll/identity.js";
import { type HollowNodeSpec, startHollowFleet } from "./hollow.js";
import { jsonLogger, type Logger } from "./logger.js";
import { LinuxHostSampler } from "./metrics/host.js";
import { nativeCredsAuthenticator } from "./nkeys/native.js";
import { ProcessRuntime } from "./runtime/process.js";

const USAGE = `usage:
  edgefleet-agent enroll --config <file>     exchange the enrollment token for node credentials
  edgefleet-agent run --config <file>        enroll if needed, then run the agent
  edgefleet-agent hollow --count N --token T --url nats://… [--enroll-url nats://…]
                         [--enroll-creds <file>] [--name-prefix hollow] [--label k=v]…
                         [--enroll-concurrency 64] [--fetch-artifacts]
                                             N simulated agents in this process (load tests)
  edgefleet-agent hollow --nodes <file.json> --enroll-url nats://… [--enroll-creds <file>] [--fetch-artifacts]
                                             one simulated agent per entry of the file
                                             ({"nodes":[{"name","token","seed"?,"url"}]}: a demo fleet)`;

class UsageError extends Error {}

async function enrollFromConfig(config: AgentConfig, logger: Logger): Promise<NodeIdentity> {
  // Enrolled already: the token is not needed any more (the native agent does the same).
  const existing = await loadIdentity(config.stateDir);
  if (existing) return existing;
  if (!config.enroll.token) {
    throw new ConfigError(
      `not enrolled yet (no ${credsPath(config.stateDir)}) and no enroll.token in the config`,
    );
  }
  const creds = config.enroll.credsFile ? await readFile(config.enroll.credsFile) : undefined;
  return enroll({
    token: config.enroll.token,
    name: config.enroll.name,
    ...(config.enroll.labels ? { labels: config.enroll.labels } : {}),
    servers: config.enroll.servers ?? config.servers,
    ...(creds ? { authenticator: nativeCredsAuthenticator(creds) } : {}),
    stateDir: config.stateDir,
    logger,
  });
}

/** Resolves on the first SIGTERM or SIGINT. */
function shutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
}

async function runAgent(config: AgentConfig, logger: Logger): Promise<void> {
  const identity = await enrollFromConfig(config, logger);
  const runtime = new ProcessRuntime({ appsDir: join(config.stateDir, "apps"), logger });
  const agent = await Agent.start({
    servers: config.servers,
    credentials: { jwt: identity.jwt, seed: identity.seed },
    // Re-issued credentials (a site move, or the first Hello after subject layout 2) replace
    // node.creds before the agent connects with them.
    saveCredentials: (jwt) => saveIdentity(config.stateDir, { ...identity, jwt }),
    runtime,
    outbox: await DiskOutbox.open({
      dir: join(config.stateDir, "outbox"),
      maxBytes: config.buffer.maxBytes,
      onEvict: (count, type) => logger.warn("outbox full, evicted oldest records", { count, type }),
    }),
    stateStore: new FileStateStore(join(config.stateDir, "state.json")),
    hostSampler: new LinuxHostSampler(config.stateDir),
    heartbeatSeconds: config.intervals.heartbeatSeconds,
    metricsSeconds: config.intervals.metricsSeconds,
    statusRefreshSeconds: config.intervals.statusRefreshSeconds,
    reconnect: config.reconnect,
    name: `edgefleet-agent ${config.enroll.name}`,
    settings: {
      stateDir: config.stateDir,
      name: config.enroll.name,
      bufferMaxBytes: String(config.buffer.maxBytes),
      reconnect: `${config.reconnect.baseMs}-${config.reconnect.maxMs} ms`,
    },
    logger,
  });
  logger.info("agent running", { wid: identity.wid, pid: process.pid });
  const signal = await shutdownSignal();
  logger.info("shutting down", { signal });
  await agent.stop();
  logger.info("stopped");
}

/** `hollow --nodes <file>`: named agents, each with its organization's token, key and leaf. */
const hollowNodesFileSchema = z.object({
  nodes: z
    .array(
      z.object({
        name: z.string().min(1),
        token: z.string().min(1),
        seed: z.string().startsWith("SU").optional(),
        url: z.string().min(1),
      }),
    )
    .min(1),
});

async function readHollowNodes(file: string): Promise<HollowNodeSpec[]> {
  const parsed = hollowNodesFileSchema.safeParse(JSON.parse(await readFile(file, "utf8")));
  if (!parsed.success) throw new UsageError(`--nodes ${file}: ${z.prettifyError(parsed.error)}`);
  return parsed.data.nodes.map(({ url, ...node }) => ({ ...node, servers: [url] }));
}

async function runHollow(args: string[], logger: Logger): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      nodes: { type: "string" },
      count: { type: "string" },
      token: { type: "string" },
      url: { type: "string", multiple: true },
      "enroll-url": { type: "string", multiple: true },
      "enroll-creds": { type: "string" },
      "name-prefix": { type: "string", default: "hollow" },
      label: { type: "string", multiple: true },
      "enroll-concurrency": { type: "string", default: "64" },
      // Off by default: pulls are simulated (10,000 agents cannot each download for real).
      "fetch-artifacts": { type: "boolean", default: false },
    },
  });
  const nodes = values.nodes ? await readHollowNodes(values.nodes) : undefined;
  const count = nodes ? nodes.length : Number(values.count);
  if (!nodes) {
    if (!Number.isInteger(count) || count < 1) throw new UsageError("--count must be a positive integer");
    if (!values.token) throw new UsageError("--token is required");
    if (!values.url?.length) throw new UsageError("--url is required");
  } else if (!values["enroll-url"]?.length) {
    throw new UsageError("--nodes needs --enroll-url (where ef.enroll is answered)");
  }
  const labels: Record<string, string> = {};
  for (const label of values.label ?? []) {
    const [key, ...rest] = label.split("=");
    if (!key || rest.length === 0) throw new UsageError(`--label ${label}: want key=value`);
    labels[key] = rest.join("=");
  }
  const fleet = await startHollowFleet({
    count,
    token: values.token ?? "",
    servers: values.url ?? [],
    ...(nodes ? { nodes } : {}),
    ...(values["enroll-url"]?.length ? { enrollServers: values["enroll-url"] } : {}),
    ...(values["enroll-creds"] ? { enrollCreds: await readFile(values["enroll-creds"], "utf8") } : {}),
    namePrefix: values["name-prefix"] ?? "hollow",
    labels,
    enrollConcurrency: Number(values["enroll-concurrency"]),
    fetchArtifacts: values["fetch-artifacts"] ?? false,
    logger,
    onProgress: (progress) => logger.info("hollow fleet progress", progress),
  });
  logger.info("hollow fleet running", {
    count,
    enrollMs: fleet.enrollMs,
    enrollPerSecond: Math.round((count * 1000) / Math.max(1, fleet.enrollMs)),
  });
  const report = setInterval(() => {
    const connected = fleet.agents.filter((agent) => agent.stats().connected).length;
    logger.info("hollow fleet", { connected, rssBytes: process.memoryUsage().rss });
  }, 30_000);
  const signal = await shutdownSignal();
  clearInterval(report);
  logger.info("shutting down", { signal });
  await fleet.stop();
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const logger = jsonLogger({ component: "edgefleet-agent" });
  if (command === "hollow") return runHollow(rest, logger);
  if (command !== "enroll" && command !== "run")
    throw new UsageError(command ? `unknown command ${command}` : "no command");
  const { values } = parseArgs({ args: rest, options: { config: { type: "string" } } });
  if (!values.config) throw new UsageError("--config <file> is required");
  const config = await loadConfig(values.config);
  if (command === "enroll") {
    const identity = await enrollFromConfig(config, logger);
    process.stdout.write(`${JSON.stringify({ nid: identity.nid, wid: identity.wid, org: identity.org })}\n`);
    return;
  }
  await runAgent(config, logger);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`edgefleet-agent: ${error.message}\n${USAGE}\n`);
      process.exit(2);
    }
    if (error instanceof ConfigError || error instanceof EnrollmentRejectedError) {
      process.stderr.write(`edgefleet-agent: ${error.message}\n`);
      process.exit(1);
    }
    process.stderr.write(
      `edgefleet-agent: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
