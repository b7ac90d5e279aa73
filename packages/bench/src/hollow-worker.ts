/**
 * One worker process of the benchmark: enrolls its share of hollow agents (real protocol, real
 * credentials, one NATS connection each, simulated runtime) and starts, stops and restarts them
 * on the driver's command. Run by the driver with fork(); exits when the driver goes away.
 */
import {
  Agent,
  ConnectPacer,
  enroll,
  HollowRuntime,
  MemoryOutbox,
  MemoryStateStore,
  type NodeIdentity,
  nativeCredsAuthenticator,
  SyntheticHostSampler,
} from "@edgefleet/agent-sdk";
import type { ArtifactRef, RunSpec } from "@edgefleet/agent-sdk/protocol";
import { connect } from "@nats-io/transport-node";
import { type DeliveryLedger, RecordingOutbox } from "./delivery-ledger.js";
import { type BehaviourTable, crashModel, nodeProfile, usageModel } from "./rollout/gates/behaviour.js";
import type { EnrollCommand, FromWorker, NodeTime, ToWorker } from "./worker-protocol.js";

/** Version switches a node's runtime was asked for, kept across restarts of its agent. */
interface SwitchCount {
  /** Version label → times the runtime was told to switch to it. */
  switches: Record<string, number>;
  /** App → the version it was last told to run. */
  lastVersion: Map<string, string>;
}

/**
 * Counts the version switches the agent asks of its runtime (a put whose version differs from the
 * app's last one): a node updated twice by a rollout switches to the same version twice. A restarted
 * agent gets a fresh runtime (its apps start again) but the same count: re-applying its stored
 * desired state is not an update.
 */
class CountingHollowRuntime extends HollowRuntime {
  constructor(
    private readonly count: SwitchCount,
    options: ConstructorParameters<typeof HollowRuntime>[0],
  ) {
    super(options);
  }

  override put(app: string, version: string, spec: RunSpec, artifact?: ArtifactRef): void {
    if (this.count.lastVersion.get(app) !== version) {
      this.count.lastVersion.set(app, version);
      this.count.switches[version] = (this.count.switches[version] ?? 0) + 1;
    }
    super.put(app, version, spec, artifact);
  }

  override remove(app: string): void {
    this.count.lastVersion.delete(app);
    super.remove(app);
  }
}

interface HollowNode {
  identity: NodeIdentity;
  name: string;
  /** Kept across stop/restart: a restarted agent resumes from its last applied revision. */
  stateStore: MemoryStateStore;
  /** The server this node's agent connects to (its site's leaf, or the hub). */
  url: string;
  agent: Agent | undefined;
  switchCount: SwitchCount;
  /** Every report whose PubAck this node's agents got, across restarts. */
  ledger: DeliveryLedger;
  /** The running agent's outbox (its backlog). */
  outbox: RecordingOutbox | undefined;
}

const nodes = new Map<string, HollowNode>();
let natsUrl = "";
let fetchArtifacts = false;
let statusRefreshSeconds: number | undefined;
let appModels = false;
/** What each version does (set by the driver before each rollout; read at every sample). */
let behaviours: BehaviourTable = {};
const currentBehaviours = () => behaviours;
let enrolled = 0;
let started = 0;

const HANDSHAKE_SLOT_MS = 30_000;
/** This process's agents reconnect (after a server restart) at most this many a second, less if they fail. */
const reconnectPacer = new ConnectPacer(50);
const send = (message: FromWorker) => process.send?.(message);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function enrollShare(command: EnrollCommand): Promise<void> {
  natsUrl = command.natsUrl;
  fetchArtifacts = command.fetchArtifacts ?? false;
  statusRefreshSeconds = command.statusRefreshSeconds;
  appModels = command.appModels ?? false;
  const connection = await connect({
    servers: command.natsUrl,
    authenticator: nativeCredsAuthenticator(command.enrollCreds),
    name: `${command.namePrefix}-enroll-${command.firstIndex}`,
    maxReconnectAttempts: -1,
  });
  let next = 0;
  let failures = 0;
  let firstError: string | undefined;
  const worker = async () => {
    while (next < command.count) {
      const index = command.firstIndex + next++;
      const name = `${command.namePrefix}-${index}`;
      const urls = command.agentUrls?.length ? command.agentUrls : [command.natsUrl];
      const tokens = command.agentTokens?.length ? command.agentTokens : [command.token];
      try {
        const identity = await enroll({
          connection,
          token: tokens[index % tokens.length] as string,
          name,
          retry: { baseMs: 500, maxMs: 5_000 },
        });
        nodes.set(identity.nid, {
          identity,
          name,
          stateStore: new MemoryStateStore(),
          url: urls[index % urls.length] as string,
          agent: undefined,
          switchCount: { switches: {}, lastVersion: new Map() },
          ledger: { st: [], mx: [] },
          outbox: undefined,
        });
        enrolled++;
      } catch (error) {
        failures++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(command.concurrency, command.count) }, worker));
  } finally {
    await connection.close();
  }
  send({
    type: "enrolled",
    nodes: [...nodes.values()].map((node) => ({ nid: node.identity.nid, name: node.name })),
    failures,
    ...(firstError ? { firstError } : {}),
  });
}

async function startAgent(node: HollowNode): Promise<void> {
  node.outbox = new RecordingOutbox(new MemoryOutbox(), node.ledger);
  node.agent = await Agent.start({
    servers: [node.url || natsUrl],
    // The agent signs each connect's nonce natively (nats.js's jwtAuthenticator uses tweetnacl,
    // ~15 ms of CPU with the key derivation, which alone saturates a process connecting thousands).
    credentials: { jwt: node.identity.jwt, seed: node.identity.seed },
    saveCredentials: async (jwt) => {
      node.identity.jwt = jwt;
    },
    runtime: new CountingHollowRuntime(node.switchCount, {
      fetchArtifacts,
      ...(appModels
        ? {
            usage: usageModel(currentBehaviours, nodeProfile(node.name)),
            crashes: crashModel(currentBehaviours),
          }
        : {}),
    }),
    outbox: node.outbox,
    stateStore: node.stateStore,
    hostSampler: new SyntheticHostSampler(),
    reconnectPacer,
    // The name is how the benchmark finds its agents' connections in the server's /connz.
    name: `${node.name}`,
    ...(statusRefreshSeconds ? { statusRefreshSeconds } : {}),
  });
}

/**
 * Starts every agent, spread evenly at `perSecond` (a fleet coming up, not one burst), with at most
 * `maxInFlight` of them still in their connect handshake: past that, starting more only makes every
 * handshake slower until the server's auth timeout drops them all.
 */
async function connectAll(perSecond: number, maxInFlight: number): Promise<void> {
  const times: NodeTime[] = [];
  const inFlight = new Set<Promise<void>>();
  const begin = Date.now();
  for (const node of nodes.values()) {
    const due = begin + (times.length * 1000) / perSecond;
    if (due > Date.now()) await sleep(due - Date.now());
    while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
    times.push({ nid: node.identity.nid, at: Date.now() });
    await startAgent(node);
    started++;
    // Bounded wait: an agent that cannot connect keeps retrying on its own without holding a slot.
    const handshake: Promise<void> = Promise.race([
      (node.agent as Agent).connectedOnce(),
      sleep(HANDSHAKE_SLOT_MS),
    ]).finally(() => inFlight.delete(handshake));
    inFlight.add(handshake);
  }
  send({ type: "started", nodes: times });
}

async function stopSome(nids: readonly string[]): Promise<void> {
  const times = await Promise.all(
    nids.map(async (nid) => {
      const node = nodes.get(nid);
      await node?.agent?.stop(500);
      if (node) node.agent = undefined;
      return { nid, at: Date.now() };
    }),
  );
  started -= times.length;
  send({ type: "stopped", nodes: times });
}

async function restartSome(nids: readonly string[]): Promise<void> {
  const times: NodeTime[] = [];
  for (const nid of nids) {
    const node = nodes.get(nid);
    if (!node || node.agent) continue;
    times.push({ nid, at: Date.now() });
    await startAgent(node);
    started++;
  }
  send({ type: "restarted", nodes: times });
}

/** When each running agent's next Hello is answered (the agent reconnected and resynced). */
async function watchHellos(timeoutMs: number, only?: readonly string[]): Promise<void> {
  const wanted = only ? new Set(only) : undefined;
  const watched = [...nodes.values()].flatMap((node) =>
    node.agent && (!wanted || wanted.has(node.identity.nid))
      ? [{ node, agent: node.agent, baseline: node.agent.hellosAnswered() }]
      : [],
  );
  const times: NodeTime[] = [];
  const seen = new Set<string>();
  const deadline = Date.now() + timeoutMs;
  while (seen.size < watched.length && Date.now() < deadline) {
    await sleep(100);
    const now = Date.now();
    for (const { node, agent, baseline } of watched) {
      if (seen.has(node.identity.nid) || agent.hellosAnswered() <= baseline) continue;
      seen.add(node.identity.nid);
      times.push({ nid: node.identity.nid, at: now });
    }
  }
  send({ type: "hellos", nodes: times, watched: watched.length });
}

async function shutdown(): Promise<void> {
  clearInterval(progressTimer);
  const agents = [...nodes.values()].flatMap((node) => (node.agent ? [node.agent] : []));
  // Bounded: a worker that cannot say goodbye in time is killed by the driver anyway.
  await Promise.race([Promise.all(agents.map((agent) => agent.stop(200))), sleep(15_000)]);
  process.exit(0);
}

const progressTimer = setInterval(() => {
  let connected = 0;
  let backlog = 0;
  let delivered = 0;
  for (const node of nodes.values()) {
    if (node.agent?.isConnected()) connected++;
    if (node.agent) backlog += node.outbox?.stats().records ?? 0;
    delivered += node.ledger.st.length + node.ledger.mx.length;
  }
  send({ type: "progress", enrolled, started, connected, backlog, delivered });
}, 1_000);

process.on("message", (message: ToWorker) => {
  const run = async () => {
    switch (message.type) {
      case "enroll":
        return enrollShare(message);
      case "connect":
        return connectAll(message.perSecond, message.maxInFlight);
      case "stop":
        return stopSome(message.nids);
      case "restart":
        return restartSome(message.nids);
      case "watch-hellos":
        return watchHellos(message.timeoutMs, message.nids);
      case "behaviours":
        behaviours = message.table;
        return send({ type: "behaviours-set" });
      case "updates":
        return send({
          type: "updates",
          nodes: [...nodes.values()].map((node) => ({
            nid: node.identity.nid,
            switches: node.switchCount.switches,
          })),
        });
      case "deliveries":
        return send({
          type: "deliveries",
          nodes: [...nodes.values()].map((node) => {
            const outbox = node.outbox?.stats();
            return {
              nid: node.identity.nid,
              st: node.ledger.st,
              mx: node.ledger.mx,
              evicted: outbox?.evicted ?? 0,
              pending: outbox?.records ?? 0,
            };
          }),
        });
      case "shutdown":
        return shutdown();
    }
  };
  run().catch((error: unknown) =>
    send({ type: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
// The driver is gone (Ctrl-C, crash): nothing of ours may stay behind.
process.on("disconnect", () => process.exit(0));
send({ type: "ready" });
