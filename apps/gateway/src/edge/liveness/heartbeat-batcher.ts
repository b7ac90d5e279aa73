import { type Db, Prisma, updateNodesWithStatusEvents } from "@edgefleet/db";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";

/**
 * Collects "node seen" events in memory and writes them in one multi-row UPDATE per flush.
 * A row is written only when the node was not online, or its stored last_seen_at is older than
 * refreshAfterMs: at 100,000 nodes most heartbeats cost no write at all (no hot-row rewrite).
 * Times are Postgres' now(), the same clock the offline sweeper compares with. A node that was
 * not online gets a status history row in the same statement (updateNodesWithStatusEvents).
 */
export class HeartbeatBatcher {
  private seen = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly options: { flushIntervalMs: number; refreshAfterMs: number },
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
  ) {}

  see(nodeId: string): void {
    this.seen.add(nodeId);
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
    const ids = [...this.seen];
    this.seen = new Set();
    try {
      // Nodes coming back online get a history row and the console a notification, in this statement.
      const { updated } = await updateNodesWithStatusEvents(this.db, {
        where: Prisma.sql`id = ANY(${ids}::uuid[])
          AND status <> 'revoked'
          AND (status <> 'online' OR last_seen_at IS NULL
               OR last_seen_at < now() - ${this.options.refreshAfterMs} * interval '1 millisecond')`,
        set: Prisma.sql`status = 'online', last_seen_at = now(), updated_at = now()`,
        reason: "heartbeat",
      });
      this.metrics.livenessUpdates.inc();
      this.metrics.livenessRows.inc(updated);
    } catch (error) {
      // Keep them for the next flush: a Postgres hiccup must not turn live nodes offline.
      for (const id of ids) this.seen.add(id);
      this.logger.error({ err: error, nodes: ids.length }, "liveness flush failed; will retry");
    }
  }
}
