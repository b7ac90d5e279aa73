import { type Db, Prisma, pruneStatusEvents, updateNodesWithStatusEvents } from "@edgefleet/db";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";

/** Advisory-lock key: one sweeper at a time across all gateway replicas. */
const SWEEPER_LOCK_KEY = 0x6566_0001; // "ef" 1
/** Status history retention (STATUS_EVENT_RETENTION_DAYS) is enforced this often, by the sweeping replica. */
const PRUNE_INTERVAL_MS = 3_600_000;

/**
 * Marks online nodes offline when not seen for offlineAfterMs, in one UPDATE per sweep. Each
 * sweep runs in a transaction holding a transaction-level advisory lock, so with several gateway
 * replicas only one sweeps at a time and no session state is needed (any pooled connection works).
 * The same statement records each node's status change (history) and notifies the console; once an
 * hour the sweep also prunes history past its retention, in bounded deletes.
 */
export class OfflineSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();
  private lastPruneAt = 0;

  constructor(
    private readonly db: Db,
    private readonly options: { offlineAfterMs: number; sweepIntervalMs: number },
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.running = this.sweep().catch((error: unknown) =>
        this.logger.error({ err: error }, "offline sweep failed; will retry"),
      );
    }, this.options.sweepIntervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One sweep; returns the ids marked offline (empty when another replica holds the lock). */
  async sweep(): Promise<string[]> {
    const ids = await this.db.$transaction(async (tx) => {
      const [lock] = await tx.$queryRaw<Array<{ locked: boolean }>>(
        Prisma.sql`SELECT pg_try_advisory_xact_lock(${SWEEPER_LOCK_KEY}) AS locked`,
      );
      if (!lock?.locked) return [];
      const { updatedIds } = await updateNodesWithStatusEvents(tx, {
        where: Prisma.sql`status = 'online'
          AND (last_seen_at IS NULL
               OR last_seen_at < now() - ${this.options.offlineAfterMs} * interval '1 millisecond')`,
        set: Prisma.sql`status = 'offline', updated_at = now()`,
        reason: "heartbeat_timeout",
        returnIds: true,
      });
      if (Date.now() - this.lastPruneAt >= PRUNE_INTERVAL_MS) {
        this.lastPruneAt = Date.now();
        const pruned = await pruneStatusEvents(tx);
        if (pruned > 0) this.logger.info({ rows: pruned }, "status history older than the retention pruned");
      }
      return updatedIds;
    });
    if (ids.length > 0) {
      this.metrics.markedOffline.inc(ids.length);
      this.logger.info({ nodes: ids.length }, "nodes marked offline");
    }
    return ids;
  }
}
