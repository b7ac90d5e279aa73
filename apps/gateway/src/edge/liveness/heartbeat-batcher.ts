import { type Db, Prisma, updateNodesWithStatusEvents } from "@edgefleet/db";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";

/**
 * Collects "node seen" events in memory and writes them in one multi-row UPDATE per flush.
 * A row is written only when the node was not online, or its stored last_seen_at is older than
 * refreshAfterMs: at 100,000 nodes most heartbeats cost no write at all (no hot-row rewrite).
 * A heartbeat is seen now (Postgres' now(), the clock the offline sweeper compares with). A
 * metrics report is seen when the hub stored it (`seenAt`, JetStream's time): a report ingested
 * late says the node was alive then, not now, and it brings an offline node back only if the hub
 * stored it after the node was marked offline (updated_at), so a dead node's last reports,
 * delivered after its disconnect, never revive it. A node that was not online gets a status
 * history row in the same statement (updateNodesWithStatusEvents).
 */
export class HeartbeatBatcher {
  /** Node id → when seen: null for now (a heartbeat), else the hub's time of a report (ms). */
  private seen = new Map<string, number | null>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly options: { flushIntervalMs: number; refreshAfterMs: number },
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
  ) {}

  /** A heartbeat: the node is alive now. */
  see(nodeId: string): void {
    this.seen.set(nodeId, null);
  }

  /** A report the hub stored at `at`: the node was alive then. */
  seenAt(nodeId: string, at: Date): void {
    const known = this.seen.get(nodeId);
    if (known === null) return; // a heartbeat in this batch says more
    if (known === undefined || at.getTime() > known) this.seen.set(nodeId, at.getTime());
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.options.flushIntervalMs);
  }

  /** Stops the timer and writes what is pending. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Writes every pending node in one statement; returns after it committed. Serialised. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.seen.size === 0) return;
    const batch = this.seen;
    this.seen = new Map();
    const ids = [...batch.keys()];
    const times = [...batch.values()].map((at) => (at === null ? null : new Date(at).toISOString()));
    const seen = Prisma.sql`unnest(${ids}::uuid[], ${times}::timestamptz[])`;
    try {
      // Nodes coming back online get a history row and the console a notification, in this statement.
      const { updated } = await updateNodesWithStatusEvents(this.db, {
        where: Prisma.sql`id IN (
          SELECT s.node_id FROM ${seen} AS s(node_id, at) JOIN node n ON n.id = s.node_id
          WHERE n.status <> 'revoked' AND CASE WHEN n.status = 'online'
            THEN n.last_seen_at IS NULL
              OR n.last_seen_at < coalesce(s.at, now()) - ${this.options.refreshAfterMs} * interval '1 millisecond'
            ELSE s.at IS NULL OR s.at > n.updated_at END)`,
        perNode: Prisma.sql`${seen} AS per_node(node_id, at)`,
        set: Prisma.sql`status = 'online', updated_at = now(),
          last_seen_at = greatest(node.last_seen_at, coalesce(per_node.at, now()))`,
        reason: "heartbeat",
      });
      this.metrics.livenessUpdates.inc();
      this.metrics.livenessRows.inc(updated);
    } catch (error) {
      // Keep them for the next flush: a Postgres hiccup must not turn live nodes offline.
      for (const [id, at] of batch) {
        if (at === null) this.see(id);
        else this.seenAt(id, new Date(at));
      }
      this.logger.error({ err: error, nodes: ids.length }, "liveness flush failed; will retry");
    }
  }
}
