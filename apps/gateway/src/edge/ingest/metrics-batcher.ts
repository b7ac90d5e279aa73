import type { MetricsReport } from "@edgefleet/agent-sdk/protocol";
import { type Db, Prisma } from "@edgefleet/db";
import type { JsMsg } from "@nats-io/jetstream";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import type { EdgeNode } from "../node-directory.js";
import type { Rejections } from "../rejections.js";
import { classify, METRICS_WINDOW, type SeenWindow, withWritten } from "./metrics-window.js";
import { type AppInstanceFacts, InterfaceAllowance, mergeSeries, seriesOfReport } from "./mimir-series.js";
import type { MimirWriter } from "./mimir-writer.js";

interface Pending {
  node: EdgeNode;
  report: MetricsReport;
  msg: JsMsg;
}

const RETRY_DELAY_MS = 5_000;
/**
 * Full batches waiting for Mimir at most before `add` holds back: each report stays unacknowledged
 * until its batch is written, and without a bound a burst queued tens of thousands behind Mimir
 * until JetStream's ack wait ran out and redelivered them all (a 20,000-node rollout).
 */
const MAX_WAITING_BATCHES = 2;

/**
 * MetricsReports, batched across messages: every flush checks sequences against each node's window
 * (node.metrics_seq and metrics_seen, metrics-window.ts: a repeat or a report older than the window
 * is rejected; a late one, overtaken by a newer report on another replica or by a redelivery, is
 * still written), writes the rest to Mimir in one request per organization, records them in the
 * windows, and acks. If the gateway dies between the write and the ack, the redelivered samples
 * are identical (same series, timestamp and value), which Mimir accepts without effect (Mimir takes
 * late samples within its out-of-order window, scripts/stack/config/mimir.yaml.template).
 */
export class MetricsBatcher {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private waitingBatches = 0;
  private readonly interfaces = new InterfaceAllowance();

  constructor(
    private readonly db: Db,
    private readonly mimir: MimirWriter,
    private readonly options: { maxBatch: number; maxDelayMs: number },
    private readonly rejections: Rejections,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
    /**
     * A node's reports are its sign of life (an agent sends no heartbeat while they flow,
     * docs/protocol.md). The statement that records a report's sequence also moves an online
     * node's last_seen_at to when the hub stored the report; a node that is not online is handed
     * here with that time, to come back online with a status history row (HeartbeatBatcher).
     */
    private readonly liveness?: (nodeId: string, storedAt: Date) => void,
  ) {}

  /**
   * Queues one report; resolves once there is room: a full batch is flushed first, and while
   * MAX_WAITING_BATCHES wait for Mimir the report waits too (which holds its caller's slot).
   */
  async add(node: EdgeNode, report: MetricsReport, msg: JsMsg): Promise<void> {
    while (this.waitingBatches >= MAX_WAITING_BATCHES) await this.flushing;
    this.pending.push({ node, report, msg });
    if (this.pending.length >= this.options.maxBatch) await this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.options.maxDelayMs);
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return this.flushing;
    this.waitingBatches++;
    this.flushing = this.flushing
      .then(() => this.write(batch))
      .finally(() => {
        this.waitingBatches--;
      });
    return this.flushing;
  }

  private async write(batch: Pending[]): Promise<void> {
    if (batch.length === 0) return;
    try {
      await this.writeBatch(batch);
    } catch (error) {
      this.logger.error({ err: error, reports: batch.length }, "metrics batch failed; redelivering");
      for (const entry of batch) entry.msg.nak(RETRY_DELAY_MS);
    }
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    const nodeIds = [...new Set(batch.map((entry) => entry.node.id))];
    const windows = await this.readWindows(nodeIds);
    const accepted: Pending[] = [];
    for (const entry of [...batch].sort((a, b) => a.report.seq - b.report.seq)) {
      const window = windows.get(entry.node.id) ?? EMPTY_WINDOW;
      // Late reports (after a newer one: another replica or a redelivery took that) are written
      // once too; repeats and reports older than the window are not.
      const verdict = classify(window, entry.report.seq);
      if (verdict !== "new") {
        this.rejections.reject(
          "mx",
          verdict,
          `seq ${entry.report.seq}: ${verdict === "duplicate" ? "written already" : `more than ${METRICS_WINDOW} before ${window.high}`}`,
        );
        entry.msg.term(verdict);
        continue;
      }
      windows.set(entry.node.id, withWritten(window, [entry.report.seq]));
      accepted.push(entry);
    }

    const byOrganization = new Map<string, Pending[]>();
    for (const entry of accepted) {
      const list = byOrganization.get(entry.node.organizationId) ?? [];
      list.push(entry);
      byOrganization.set(entry.node.organizationId, list);
    }
    const desiredApps = await this.desiredApps([...new Set(accepted.map((entry) => entry.node.id))]);
    const done: Pending[] = [];
    for (const [organizationId, entries] of byOrganization) {
      const series = mergeSeries(
        entries.map((entry) => {
          const { series, dropped } = seriesOfReport(organizationId, entry.node.id, entry.report, {
            apps: desiredApps.get(entry.node.id) ?? NO_APPS,
            interfaces: this.interfaces.admit(
              entry.node.id,
              entry.report.net.map((net) => net.if),
            ),
          });
          if (dropped.apps > 0 || dropped.interfaces > 0) {
            this.rejections.reject(
              "mx",
              "series_budget",
              `${dropped.apps} app(s) not desired on the node, ${dropped.interfaces} interface(s) over the budget`,
              `node ${entry.node.id}`,
            );
          }
          if (dropped.repeated > 0) {
            this.rejections.reject(
              "mx",
              "repeated_name",
              `${dropped.repeated} app or interface name(s) repeated in one report; the first of each was written`,
              `node ${entry.node.id}`,
            );
          }
          return { nodeId: entry.node.id, series };
        }),
      );
      const result = await this.mimir.write(organizationId, series);
      if (result.outcome === "retry") {
        this.logger.warn({ organizationId, detail: result.detail }, "Mimir write failed; redelivering");
        for (const entry of entries) entry.msg.nak(RETRY_DELAY_MS);
        continue;
      }
      if (result.outcome === "rejected") {
        for (const entry of entries) {
          this.rejections.reject("mx", "mimir_rejected", result.detail, `node ${entry.node.id}`);
        }
      }
      done.push(...entries);
    }
    if (done.length === 0) return;

    const written = new Map<string, { seqs: number[]; storedAt: number }>();
    for (const entry of done) {
      const known = written.get(entry.node.id);
      const storedAt = Math.floor(entry.msg.info.timestampNanos / 1e6);
      written.set(entry.node.id, {
        seqs: [...(known?.seqs ?? []), entry.report.seq],
        storedAt: Math.max(known?.storedAt ?? 0, storedAt),
      });
    }
    await this.recordWritten(written);
    for (const entry of done) entry.msg.ack();
    this.metrics.accepted.inc({ type: "mx" }, done.length);
  }

  private async readWindows(nodeIds: readonly string[]): Promise<Map<string, SeenWindow>> {
    if (nodeIds.length === 0) return new Map();
    const rows = await this.db.$queryRaw<Array<{ id: string; seq: bigint; seen: bigint }>>(
      Prisma.sql`SELECT id, metrics_seq AS seq, metrics_seen AS seen FROM node WHERE id = ANY(${nodeIds}::uuid[])`,
    );
    return new Map(rows.map((row) => [row.id, { high: Number(row.seq), seen: BigInt(row.seen) }]));
  }

  /**
   * Adds the written sequences to each node's window, and the newest report's store time to an
   * online node's last_seen_at. Another replica may have moved a window since it was read: the
   * update is conditional on the values read, and a node that moved is read again and merged
   * (windows merge in any order), until every node's update lands. Rows are locked in id order,
   * as every statement that updates many nodes does (no deadlock between them).
   */
  private async recordWritten(
    written: ReadonlyMap<string, { seqs: number[]; storedAt: number }>,
  ): Promise<void> {
    let pending = new Map([...written].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    for (let attempt = 0; pending.size > 0; attempt++) {
      if (attempt >= RECORD_ATTEMPTS) throw new Error(`metrics windows of ${pending.size} nodes kept moving`);
      const before = await this.readWindows([...pending.keys()]);
      const ids: string[] = [];
      const oldHigh: number[] = [];
      const oldSeen: bigint[] = [];
      const newHigh: number[] = [];
      const newSeen: bigint[] = [];
      const storedAt: string[] = [];
      for (const [id, { seqs, storedAt: at }] of pending) {
        const window = before.get(id);
        if (!window) continue; // the node is gone
        const next = withWritten(window, seqs);
        storedAt.push(new Date(at).toISOString());
        ids.push(id);
        oldHigh.push(window.high);
        oldSeen.push(window.seen);
        newHigh.push(next.high);
        newSeen.push(next.seen);
      }
      if (ids.length === 0) return;
      const updated = await this.db.$queryRaw<
        Array<{ id: string; online: boolean; stored_at: Date }>
      >(Prisma.sql`
        WITH v AS (
          SELECT * FROM unnest(${ids}::uuid[], ${oldHigh}::bigint[], ${oldSeen}::bigint[], ${newHigh}::bigint[],
                               ${newSeen}::bigint[], ${storedAt}::timestamptz[])
            AS v(id, old_high, old_seen, new_high, new_seen, stored_at)
        ), locked AS MATERIALIZED (
          SELECT node.id FROM node JOIN v ON v.id = node.id ORDER BY node.id FOR UPDATE OF node
        )
        UPDATE node SET metrics_seq = v.new_high, metrics_seen = v.new_seen,
          last_seen_at = CASE WHEN node.status = 'online'
            THEN greatest(node.last_seen_at, v.stored_at) ELSE node.last_seen_at END
        FROM v JOIN locked ON locked.id = v.id
        WHERE node.id = v.id AND node.metrics_seq = v.old_high AND node.metrics_seen = v.old_seen
        RETURNING node.id::text AS id, node.status = 'online' AS online, v.stored_at`);
      for (const row of updated) if (!row.online) this.liveness?.(row.id, row.stored_at);
      const landed = new Set(updated.map((row) => row.id));
      pending = new Map([...pending].filter(([id]) => before.has(id) && !landed.has(id)));
    }
  }

  /**
   * The apps each node is desired to run (the only per-app series it may create), with the
   * version label of what runs and its restarts, which the per-app series carry.
   */
  private async desiredApps(nodeIds: string[]): Promise<Map<string, Map<string, AppInstanceFacts>>> {
    const byNode = new Map<string, Map<string, AppInstanceFacts>>();
    if (nodeIds.length === 0) return byNode;
    const rows = await this.db.$queryRaw<
      Array<{ node_id: string; name: string; version: string | null; restarts: number }>
    >(Prisma.sql`
      SELECT i.node_id::text AS node_id, a.name, v.version, i.restarts
      FROM app_instance i JOIN app a ON a.id = i.app_id
        LEFT JOIN app_version v ON v.id = i.observed_version_id
      WHERE i.node_id = ANY(${nodeIds}::uuid[])`);
    for (const row of rows) {
      const apps = byNode.get(row.node_id) ?? new Map<string, AppInstanceFacts>();
      apps.set(row.name, { version: row.version, restarts: row.restarts });
      byNode.set(row.node_id, apps);
    }
    return byNode;
  }
}

const NO_APPS: ReadonlyMap<string, AppInstanceFacts> = new Map();
const EMPTY_WINDOW: SeenWindow = { high: 0, seen: 0n };
/** Conditional window updates tried before the batch is given up (and redelivered). */
const RECORD_ATTEMPTS = 10;
