import { readFileSync } from "node:fs";
import { setTimeout } from "node:timers/promises";
import type { JetStreamManager } from "@nats-io/jetstream";
import { connect, credsAuthenticator } from "@nats-io/transport-node";
import type { Logger } from "./logger.js";

/** Most copies a hub stream keeps: R3 survives one node's loss; more only costs writes. */
export const MAX_STREAM_REPLICAS = 3;

/** The replica count for a hub whose JetStream meta group has `clusterSize` servers. */
export function streamReplicasFor(clusterSize: number): number {
  return Math.max(1, Math.min(MAX_STREAM_REPLICAS, Math.floor(clusterSize)));
}

/**
 * How many copies the hub streams the gateway owns keep (EF_UP, the organizations' artifact
 * stores): they follow the deployment. A single nats-server gives 1; a cluster gives its
 * JetStream meta group's size (as the system account's JSZ reports it, peers that are down
 * included), at most 3. Asked once per process; a failed question is asked again next time
 * rather than guessed: a wrong answer would scale a replicated stream down.
 */
export class HubReplicas {
  private answer: Promise<number> | null = null;

  constructor(
    private readonly servers: string[],
    /** The system account's credentials; without them the hub is taken for a single server. */
    private readonly systemCredsFile: string | undefined,
    private readonly logger: Logger,
  ) {}

  get(): Promise<number> {
    this.answer ??= this.ask().catch((error: unknown) => {
      this.answer = null;
      throw error;
    });
    return this.answer;
  }

  private async ask(): Promise<number> {
    if (!this.systemCredsFile) {
      this.logger.warn("NATS_SYSTEM_CREDS not set: hub streams get 1 replica");
      return 1;
    }
    const nc = await connect({
      servers: this.servers,
      authenticator: credsAuthenticator(readFileSync(this.systemCredsFile)),
      name: "edgefleet-gateway hub-replicas",
      timeout: 5_000,
    });
    try {
      const reply = await nc.request("$SYS.REQ.SERVER.PING.JSZ", "", { timeout: 5_000 });
      const body = reply.json<{ data?: { meta_cluster?: { cluster_size?: number } } }>();
      // No meta_cluster: JetStream on one server, not clustered.
      const replicas = streamReplicasFor(body.data?.meta_cluster?.cluster_size ?? 1);
      this.logger.info({ replicas }, "hub streams follow the JetStream cluster");
      return replicas;
    } finally {
      await nc.close();
    }
  }
}

/**
 * After a stream's replicas change, its new group elects a leader (about a second, measured on a
 * three-node cluster); a publish meanwhile times out. Waits until it has a leader and every
 * follower is current, or `timeoutMs` passed (then the caller's publish fails and is retried
 * the way any publish during an election is).
 */
export async function untilStreamLeads(
  jsm: JetStreamManager,
  stream: string,
  replicas: number,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const info = await jsm.streams.info(stream).catch(() => null);
    const followers = info?.cluster?.replicas ?? [];
    if (info?.cluster?.leader && followers.length === replicas - 1 && followers.every((peer) => peer.current))
      return;
    await setTimeout(100);
  }
}
