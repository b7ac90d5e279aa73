import {
  type DesiredDelta,
  encodeMessage,
  formatWireId,
  PROTOCOL_VERSION,
  platformDownSubject,
} from "@edgefleet/agent-sdk/protocol";
import {
  connectionConfigFromUrl,
  type Db,
  DESIRED_REVISION_CHANNEL,
  desiredDeltaSince,
  nodeIdsOfNotification,
  Prisma,
} from "@edgefleet/db";
import type { NatsConnection } from "@nats-io/transport-node";
import pg from "pg";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import type { EdgeService } from "../service.js";
import { toWireDelta } from "./wire-delta.js";

/** Session advisory lock held by the one publishing replica on its LISTEN connection. */
const PUBLISHER_LOCK_KEY = 0x6566_0002;
/** Nodes published to at once. */
const PUBLISH_CONCURRENCY = 8;

export interface DesiredPublisherConfig {
  databaseUrl: string;
  /** Catch-up scan period, and retry period for a replica that is not the publisher. */
  rescanMs: number;
}

/**
 * Publishes a DesiredDelta to `ef.t.<org>.down.<wid>` whenever a node's desired revision rises.
 *
 * Wake-up: Postgres NOTIFY on `edgefleet_desired` (sent by setDesiredApps and, ~210 node ids per
 * payload, setDesiredAppsForNodes at commit) on a
 * dedicated connection. Exactly one gateway replica publishes: the one holding a session advisory
 * lock on that connection (if its connection dies, the lock goes with it and another takes over).
 * Safety net: every rescanMs, online nodes whose applied revision lags are published again (a
 * notification missed during a reconnect, a delta lost on the wire).
 * The delta runs from the node's applied revision, so it is always applicable (puts and deletes
 * are absolute); an agent offline at the time gets it through Hello instead.
 */
export class DesiredPublisher implements EdgeService {
  readonly name = "desired-publisher";
  private platform: NatsConnection | null = null;
  private client: pg.Client | null = null;
  private leader = false;
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;
  private queue = new Set<string>();
  private draining: Promise<void> | null = null;
  private lastSent = new Map<string, { revision: number; at: number }>();

  constructor(
    private readonly db: Db,
    private readonly config: DesiredPublisherConfig,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
  ) {}

  async start(platform: NatsConnection): Promise<void> {
    this.platform = platform;
    this.stopped = false;
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.config.rescanMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.draining;
    await this.dropConnection();
  }

  /** Whether this replica currently publishes (tests and logs). */
  get isLeader(): boolean {
    return this.leader;
  }

  private async tick(): Promise<void> {
    try {
      if (!this.leader) await this.tryLead();
      if (this.leader) await this.rescan();
    } catch (error) {
      this.logger.error({ err: error }, "desired publisher tick failed; will retry");
      await this.dropConnection();
    }
  }

  private async tryLead(): Promise<void> {
    if (!this.client) {
      const client = new pg.Client({
        ...connectionConfigFromUrl(this.config.databaseUrl),
        connectionTimeoutMillis: 5_000,
      });
      client.on("error", (error) => {
        this.logger.warn({ err: error }, "desired publisher lost its Postgres connection");
        void this.dropConnection();
      });
      client.on("notification", (message) => {
        // One node id (setDesiredApps), or many comma-separated (setDesiredAppsForNodes).
        if (message.channel !== DESIRED_REVISION_CHANNEL || !message.payload) return;
        for (const nodeId of nodeIdsOfNotification(message.payload)) this.enqueue(nodeId);
      });
      await client.connect();
      this.client = client;
    }
    const result = await this.client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [
      PUBLISHER_LOCK_KEY,
    ]);
    if (!result.rows[0]?.locked) return;
    await this.client.query(`LISTEN ${DESIRED_REVISION_CHANNEL}`);
    this.leader = true;
    this.logger.info("publishing desired-state deltas (this replica holds the publisher lock)");
  }

  private async dropConnection(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.leader = false;
    if (client) await client.end().catch(() => undefined);
  }

  /** Online nodes behind their desired revision, not sent recently: publish again. */
  private async rescan(): Promise<void> {
    const rows = await this.db.$queryRaw<Array<{ id: string }>>(Prisma.sql`
      SELECT id FROM node WHERE status = 'online' AND desired_revision > applied_revision`);
    const now = Date.now();
    for (const { id } of rows) {
      const sent = this.lastSent.get(id);
      if (!sent || now - sent.at >= this.config.rescanMs) this.enqueue(id);
    }
  }

  private enqueue(nodeId: string): void {
    if (this.stopped) return;
    this.queue.add(nodeId);
    this.draining ??= this.drain().finally(() => {
      this.draining = null;
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.size > 0 && !this.stopped) {
      const batch = [...this.queue];
      this.queue = new Set();
      // A few nodes at once: each publish is two Postgres round trips, and a rollout to 10,000
      // nodes one after the other would trail the API by minutes. Each node appears once a batch.
      let next = 0;
      const worker = async () => {
        while (next < batch.length && !this.stopped) {
          const nodeId = batch[next++] as string;
          try {
            await this.publish(nodeId);
          } catch (error) {
            this.logger.error({ err: error, nodeId }, "publishing a desired delta failed");
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(PUBLISH_CONCURRENCY, batch.length) }, worker));
    }
  }

  private async publish(nodeId: string): Promise<void> {
    const platform = this.platform;
    if (!platform) return;
    const [node] = await this.db.$queryRaw<
      Array<{ org: bigint; wid: bigint; applied_revision: number; status: string }>
    >(Prisma.sql`
      SELECT o.wire_id AS org, n.wire_id AS wid, n.applied_revision, n.status::text AS status
      FROM node n JOIN organization o ON o.id = n.organization_id WHERE n.id = ${nodeId}::uuid`);
    // Revoked nodes get nothing. Offline ones are published to anyway (no subscriber: no cost);
    // they resume through Hello when they return.
    if (!node || node.status === "revoked") return;
    const delta = await desiredDeltaSince(this.db, nodeId, node.applied_revision);
    if (!delta) return;
    const message: DesiredDelta = { v: PROTOCOL_VERSION, ...toWireDelta(delta) };
    const subject = platformDownSubject(formatWireId(BigInt(node.org)), formatWireId(BigInt(node.wid)));
    platform.publish(subject, encodeMessage("desiredDelta", message));
    this.lastSent.set(nodeId, { revision: delta.to, at: Date.now() });
    if (this.lastSent.size > 500_000) this.lastSent.clear();
    // Never a re-list here: the delta runs from the node's applied revision (0 only before its
    // first sync; a Hello that reset it to 0 counted the re-list already).
    this.metrics.desiredDeltas.inc({ via: "publish" });
  }
}
