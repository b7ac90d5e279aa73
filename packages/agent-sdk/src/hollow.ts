import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Agent } from "./agent/agent.js";
import { type BackoffPolicy, ConnectPacer } from "./agent/backoff.js";
import { MemoryOutbox } from "./agent/outbox.js";
import { MemoryStateStore } from "./agent/state-store.js";
import { enroll } from "./enroll/enroll.js";
import type { NodeIdentity } from "./enroll/identity.js";
import { type Logger, silentLogger } from "./logger.js";
import { SyntheticHostSampler } from "./metrics/host.js";
import { nativeCredsAuthenticator } from "./nkeys/native.js";
import { HollowRuntime, type HollowUsage } from "./runtime/hollow.js";

/** One agent of a fleet whose nodes are named and placed one by one (see `nodes`). */
export interface HollowNodeSpec {
  name: string;
  /** Enrollment token of this node (its organization's); default the fleet's `token`. */
  token?: string;
  /** A key provisioned beforehand (nkey seed): enrollment answers for the node that has it. */
  seed?: string;
  /** Where this agent connects (its site's leaf node); default the fleet's `servers`. */
  servers?: string[];
}

export interface HollowFleetOptions {
  count: number;
  token: string;
  /** Where the hollow agents connect (a leaf node or the hub's leaf port). */
  servers: string[];
  /**
   * Named agents, each with its own token, key and servers (a demo fleet spread over sites).
   * When given, `count` is its length and names come from it, not from `namePrefix`.
   */
  nodes?: HollowNodeSpec[];
  /** Where `ef.enroll` is answered; default `servers`. */
  enrollServers?: string[];
  enrollCreds?: string;
  /** Node names are `<namePrefix>-<i>`. */
  namePrefix: string;
  labels?: Record<string, string>;
  /** Enrollment requests in flight at once. */
  enrollConcurrency?: number;
  /** Agents in their connect handshake at once (default 64). */
  connectConcurrency?: number;
  reconnect?: BackoffPolicy;
  /** Really download artifacts (hashed and dropped); default off: pulls are simulated. */
  fetchArtifacts?: boolean;
  /** Per-app usage each agent reports for the version it runs (see HollowRuntimeOptions.usage). */
  appUsage?: HollowUsage;
  logger?: Logger;
  onProgress?: (progress: { enrolled: number; started: number }) => void;
}

export interface HollowFleet {
  identities: NodeIdentity[];
  agents: Agent[];
  enrollMs: number;
  stop(): Promise<void>;
}

/**
 * Thousands of simulated agents in one process: each enrolls with the token, holds its own
 * connection and credentials and speaks the real protocol; only the runtime (HollowRuntime),
 * the host sampler and the buffers are simulated (in memory). Artifact pulls are simulated too
 * unless `fetchArtifacts` (then each agent downloads through the gateway for real).
 */
export async function startHollowFleet(options: HollowFleetOptions): Promise<HollowFleet> {
  const logger = options.logger ?? silentLogger;
  const enrollCreds = options.enrollCreds;
  const enrollConnection: NatsConnection = await connect({
    servers: options.enrollServers ?? options.servers,
    ...(enrollCreds ? { authenticator: nativeCredsAuthenticator(enrollCreds) } : {}),
    name: `edgefleet-hollow enroll ${options.namePrefix}`,
    maxReconnectAttempts: -1,
    waitOnFirstConnect: true,
  });

  const nodes: HollowNodeSpec[] =
    options.nodes ??
    Array.from({ length: options.count }, (_, index) => ({ name: `${options.namePrefix}-${index}` }));
  const identities: NodeIdentity[] = new Array(nodes.length);
  const agents: Agent[] = [];
  const started = Date.now();
  let next = 0;
  let enrolled = 0;
  const worker = async () => {
    while (next < nodes.length) {
      const index = next++;
      const node = nodes[index] as HollowNodeSpec;
      identities[index] = await enroll({
        connection: enrollConnection,
        token: node.token ?? options.token,
        name: node.name,
        ...(node.seed ? { seed: node.seed } : {}),
        ...(options.labels ? { labels: options.labels } : {}),
        retry: { baseMs: 500, maxMs: 10_000 },
        logger,
      });
      enrolled++;
      if (enrolled % 500 === 0) options.onProgress?.({ enrolled, started: 0 });
    }
  };
  try {
    await Promise.all(
      Array.from({ length: Math.min(nodes.length, options.enrollConcurrency ?? 64) }, worker),
    );
  } finally {
    await enrollConnection.close();
  }
  const enrollMs = Date.now() - started;

  // At most this many agents in their connect handshake at once: starting all at once makes every
  // handshake slow enough for the server's auth timeout to drop most of them.
  const inFlight = new Set<Promise<void>>();
  // After a server restart, this process's agents reconnect one slot at a time (ConnectPacer).
  const reconnectPacer = new ConnectPacer(50);
  const maxInFlight = options.connectConcurrency ?? 64;
  for (const [index, identity] of identities.entries()) {
    while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
    const agent = await Agent.start({
      servers: nodes[index]?.servers ?? options.servers,
      credentials: { jwt: identity.jwt, seed: identity.seed },
      // Re-issued credentials stay in memory: a hollow fleet enrolls again at its next start.
      saveCredentials: async (jwt) => {
        identity.jwt = jwt;
      },
      runtime: new HollowRuntime({
        fetchArtifacts: options.fetchArtifacts ?? false,
        ...(options.appUsage ? { usage: options.appUsage } : {}),
      }),
      outbox: new MemoryOutbox(),
      stateStore: new MemoryStateStore(),
      hostSampler: new SyntheticHostSampler(),
      ...(options.reconnect ? { reconnect: options.reconnect } : {}),
      reconnectPacer,
      name: `edgefleet-hollow ${identity.wid}`,
    });
    agents.push(agent);
    const handshake: Promise<void> = Promise.race([agent.connectedOnce(), delay(30_000)]).finally(() =>
      inFlight.delete(handshake),
    );
    inFlight.add(handshake);
    if (agents.length % 500 === 0) options.onProgress?.({ enrolled, started: agents.length });
  }

  return {
    identities,
    agents,
    enrollMs,
    async stop() {
      await Promise.all(agents.map((agent) => agent.stop(1_000)));
    },
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
