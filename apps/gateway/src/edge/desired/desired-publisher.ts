import {
  type DesiredDelta,
  encodeMessage,
  formatWireId,
  PROTOCOL_VERSION,
} from "@edgefleet/agent-sdk/protocol";
import {
  connectionConfigFromUrl,
  type Db,
  DESIRED_REVISION_CHANNEL,
  desiredDeltasSince,
  NODE_MOVED_CHANNEL,
  nodeIdsOfNotification,
  Prisma,
} from "@edgefleet/db";
import type { NatsConnection } from "@nats-io/transport-node";
import pg from "pg";
import type { Logger } from "../../logger.js";
import type { CredentialsPusher } from "../credentials/credentials-pusher.js";
import type { Downlinks } from "../credentials/downlinks.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import type { EdgeService } from "../service.js";
import { toWireDelta } from "./wire-delta.js";

/** Session advisory lock held by the one publishing replica on its LISTEN connection. */
const PUBLISHER_LOCK_KEY = 0x6566_0002;
/** Nodes whose deltas are read in one go. */
const PUBLISH_BATCH = 500;
/** A lagging node's resend interval doubles per unanswered send, up to this many rescan periods. */
const RESEND_MAX_FACTOR = 16;

/** The last delta sent to a node: to which revision, when, and how many times in a row. */
export interface SentDelta {
  revision: number;
  at: number;
  sends: number;
}

/**
 * Whether the rescan sends a lagging node its delta again. An ack that has not been stored yet
 * is usually late, not lost: it waits in EF_UP behind other reports while a rollout's statuses
 * flood in (an agent buffers its ack until JetStream stores it, and ignores a delta it has
 * applied). Resending every period then only costs the gateway a delta read and a publish per
 * lagging node while it is busiest (a 20,000-node rollout sent 132,000 deltas), so the wait
 * doubles per unanswered send: a delta that really was lost still comes again, after rescanMs,
 * then 2×, 4× … up to RESEND_MAX_FACTOR×.
 */
export function resendDue(sent: SentDelta | undefined, now: number, rescanMs: number): boolean {
  if (!sent) return true;
  const factor = Math.min(RESEND_MAX_FACTOR, 2 ** Math.max(0, sent.sends - 1));
  return now - sent.at >= rescanMs * factor;
}

export interface DesiredPublisherConfig {
  databaseUrl: string;
  /** Catch-up scan period, and retry period for a replica that is not the publisher. */
  rescanMs: number;
}

/**
 * Publishes a DesiredDelta on a node's downlink (`ef.t.<org>.down.<site>.<wid>.<token>`, of the site
 * it listens on) whenever a node's desired revision rises. It also sends moved nodes credentials
 * for their new site (CredentialsPusher): on `edgefleet_node_moved`, and again on the rescan.
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
  private lastSent = new Map<string, SentDelta>();

  constructor(
    private readonly db: Db,
    private readonly config: DesiredPublisherConfig,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
    private readonly downlinks: Downlinks,
    /** Null without tenancy secrets (no credentials to send). */
    private readonly credentials: CredentialsPusher | null = null,
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
        if (!message.payload) return;
        if (message.channel === NODE_MOVED_CHANNEL) {
          void this.pushMoved([message.payload]);
          return;
        }
        // One node id (setDesiredApps), or many comma-separated (setDesiredAppsForNodes).
        if (message.channel !== DESIRED_REVISION_CHANNEL) return;
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
    await this.client.query(`LISTEN ${NODE_MOVED_CHANNEL}`);
    this.leader = true;
    this.logger.info("publishing desired-state deltas (this replica holds the publisher lock)");
  }

  private async dropConnection(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.leader = false;
    if (client) await client.end().catch(() => undefined);
  }

  private async pushMoved(nodeIds: string[]): Promise<void> {
    const platform = this.platform;
    if (!platform || !this.credentials || this.stopped) return;
    await this.credentials
      .pushMoved(platform, nodeIds)
      .catch((error: unknown) => this.logger.error({ err: error }, "sending moved nodes credentials failed"));
  }

  /** Online nodes behind their desired revision, not sent recently: publish again. */
  private async rescan(): Promise<void> {
    if (this.platform && this.credentials) await this.credentials.rescan(this.platform);
    const rows = await this.db.$queryRaw<Array<{ id: string }>>(Prisma.sql`
      SELECT id FROM node WHERE status = 'online' AND desired_revision > applied_revision`);
    const now = Date.now();
    for (const { id } of rows) {
      if (resendDue(this.lastSent.get(id), now, this.config.rescanMs)) this.enqueue(id);
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
      // A rollout batch of 10,000 nodes arrives as ~50 notifications: their deltas are read a
      // few hundred nodes at a time in three statements (desiredDeltasSince), not five round
      // trips per node (which took ~55 s for 10,000 nodes). Each node appears once a batch.
      const batch = [...this.queue].slice(0, PUBLISH_BATCH);
      for (const nodeId of batch) this.queue.delete(nodeId);
      try {
        await this.publishBatch(batch);
      } catch (error) {
        this.logger.error({ err: error, nodes: batch.length }, "publishing desired deltas failed");
      }
    }
  }

  private async publishBatch(nodeIds: string[]): Promise<void> {
    const platform = this.platform;
    if (!platform) return;
    // From each node's applied revision: always applicable, never a re-list (0 only before a
    // node's first sync; a Hello that reset it to 0 counted the re-list already).
    const deltas = await desiredDeltasSince(
      this.db,
      nodeIds.map((nodeId) => ({ nodeId, fromRevision: null })),
    );
    for (const node of deltas) {
      // Revoked nodes get nothing. Offline ones are published to anyway (no subscriber: no
      // cost); they resume through Hello when they return.
      if (node.status === "revoked" || !node.delta) continue;
      let message: DesiredDelta;
      try {
        message = { v: PROTOCOL_VERSION, ...toWireDelta(node.delta) };
      } catch (error) {
        this.logger.error({ err: error, nodeId: node.nodeId }, "a desired delta cannot be sent");
        continue;
      }
      let subject: string;
      try {
        subject = this.downlinks.subject({
          org: formatWireId(node.organizationWireId),
          wid: formatWireId(node.nodeWireId),
          subjectSite: node.subjectSite,
        });
      } catch (error) {
        this.logger.error({ err: error, nodeId: node.nodeId }, "the node's downlink is unknown");
        continue;
      }
      platform.publish(subject, encodeMessage("desiredDelta", message));
      const previous = this.lastSent.get(node.nodeId);
      const sends = previous?.revision === node.delta.to ? previous.sends + 1 : 1;
      this.lastSent.set(node.nodeId, { revision: node.delta.to, at: Date.now(), sends });
      this.metrics.desiredDeltas.inc({ via: "publish" });
    }
    if (this.lastSent.size > 500_000) this.lastSent.clear();
  }
}
