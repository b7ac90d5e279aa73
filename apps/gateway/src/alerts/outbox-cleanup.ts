import type { Db } from "@edgefleet/db";
import type { Logger } from "../logger.js";
import type { AlertingMetrics } from "./alerting-metrics.js";
import type { AdvisoryLeader } from "./leader.js";

export interface OutboxCleanupConfig {
  /** Finished notifications (delivered, failed, dropped) older than this are deleted. */
  retentionMs: number;
  intervalMs: number;
}

/** Rows per DELETE and DELETEs per pass: a pass is bounded, a backlog drains over several passes. */
const BATCH = 5_000;
const MAX_BATCHES = 20;

/**
 * Keeps the relay's outbox (alert_notification, and its delivery log by cascade) bounded: the
 * leader deletes finished rows older than the retention, in batches so a long backlog never
 * holds locks or a transaction for long. Pending rows are never touched. The Alerts page's
 * history therefore reaches back as far as the retention.
 */
export class OutboxCleanup {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly db: Db,
    private readonly leader: AdvisoryLeader,
    private readonly config: OutboxCleanupConfig,
    private readonly metrics: AlertingMetrics,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.config.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One pass (exposed for tests); resolves to the number of rows deleted. */
  tick(): Promise<number> {
    if (this.running) return this.running;
    this.running = this.pass()
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, "alert outbox cleanup failed");
        return 0;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async pass(): Promise<number> {
    if (!(await this.leader.isLeader())) return 0;
    const cutoff = new Date(Date.now() - this.config.retentionMs);
    let deleted = 0;
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const count = await this.db.$executeRaw`
        DELETE FROM alert_notification WHERE id IN (
          SELECT id FROM alert_notification
          WHERE state IN ('delivered', 'failed', 'dropped') AND created_at < ${cutoff}
          LIMIT ${BATCH})`;
      deleted += count;
      if (count < BATCH) break;
    }
    if (deleted > 0) {
      this.metrics.outboxDeleted.inc(deleted);
      this.logger.info({ deleted, cutoff }, "old alert notifications deleted");
    }
    return deleted;
  }
}
