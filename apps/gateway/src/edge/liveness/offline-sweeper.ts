import { type Db, Prisma, pruneStatusEvents, updateNodesWithStatusEvents } from "@edgefleet/db";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";

/** Advisory-lock key: one sweeper at a time across all gateway replicas. */
const SWEEPER_LOCK_KEY = 0x6566_0001; // "ef" 1
/** The sweep waits for a lagging ingest at most this many offline bounds (10 min at the defaults). */
const MAX_HOLD_OFFLINE_AFTERS = 3;
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
  private lastLagLogAt = 0;

  constructor(
    private readonly db: Db,
    private readonly options: { offlineAfterMs: number; sweepIntervalMs: number },
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
    /**
     * How far the ingest of nodes' reports got (UpIngestService.ingestedUpTo): liveness is judged
     * as of then when it lags, so a backlog (Mimir slow, a burst) never sweeps nodes whose reports
     * wait in it. Null or absent: now.
     */
    private readonly ingestedUpTo?: () => Promise<Date | null>,
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
    const asOf = await this.asOf();
    const ids = await this.db.$transaction(async (tx) => {
      const [lock] = await tx.$queryRaw<Array<{ locked: boolean }>>(
        Prisma.sql`SELECT pg_try_advisory_xact_lock(${SWEEPER_LOCK_KEY}) AS locked`,
      );
      if (!lock?.locked) return [];
      const { updatedIds } = await updateNodesWithStatusEvents(tx, {
        where: Prisma.sql`status = 'online'
          AND (last_seen_at IS NULL
               OR last_seen_at < least(now(), ${asOf}::timestamptz) - ${this.options.offlineAfterMs} * interval '1 millisecond')`,
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

  /**
   * The time liveness is judged at: now, or the ingest's position when it lags, held back at most
   * MAX_HOLD_OFFLINE_AFTERS offline bounds: a message stuck in EF_UP (retried until the stream's
   * 24 h max age) must not stop the sweep for a day. Past the cap a live node whose reports wait
   * longer may be swept; its first report ingested brings it back.
   */
  private async asOf(): Promise<string | null> {
    if (!this.ingestedUpTo) return null;
    try {
      const oldest = await this.ingestedUpTo();
      const floor = Date.now() - MAX_HOLD_OFFLINE_AFTERS * this.options.offlineAfterMs;
      const upTo = oldest ? new Date(Math.max(oldest.getTime(), floor)) : null;
      const lagMs = upTo ? Date.now() - upTo.getTime() : 0;
      if (lagMs > this.options.offlineAfterMs / 4 && Date.now() - this.lastLagLogAt >= 60_000) {
        this.lastLagLogAt = Date.now();
        this.logger.warn({ lagMs }, "reports wait in EF_UP: liveness is judged as of the oldest");
      }
      return upTo ? upTo.toISOString() : null;
    } catch (error) {
      // Cannot tell (NATS away): judged now, as before reports counted as liveness.
      this.logger.warn({ err: error }, "cannot read EF_UP's position; liveness judged now");
      return null;
    }
  }
}
