import type { MetricsReport } from "@edgefleet/agent-sdk/protocol";
import { type Db, Prisma } from "@edgefleet/db";
import type { JsMsg } from "@nats-io/jetstream";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import type { EdgeNode } from "../node-directory.js";
import type { Rejections } from "../rejections.js";
import { type AppInstanceFacts, InterfaceAllowance, mergeSeries, seriesOfReport } from "./mimir-series.js";
import type { MimirWriter } from "./mimir-writer.js";

interface Pending {
  node: EdgeNode;
  report: MetricsReport;
  msg: JsMsg;
}

const RETRY_DELAY_MS = 5_000;

/**
 * MetricsReports, batched across messages: every flush checks sequences against node.metrics_seq
 * (a report not newer than the stored one is a duplicate or out of order: rejected), writes the
 * rest to Mimir in one request per organization, then advances metrics_seq in one UPDATE and acks.
 * If the gateway dies between the write and the ack, the redelivered samples are identical
 * (same series, timestamp and value), which Mimir accepts without effect.
 */
export class MetricsBatcher {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private readonly interfaces = new InterfaceAllowance();

  constructor(
    private readonly db: Db,
    private readonly mimir: MimirWriter,
    private readonly options: { maxBatch: number; maxDelayMs: number },
    private readonly rejections: Rejections,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
  ) {}

  /** Queues one report; resolves once there is room (a full batch is flushed first). */
  async add(node: EdgeNode, report: MetricsReport, msg: JsMsg): Promise<void> {
    this.pending.push({ node, report, msg });
    if (this.pending.length >= this.options.maxBatch) await this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.options.maxDelayMs);
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.flushing.then(() => this.write(batch));
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
    const stored = await this.db.$queryRaw<Array<{ id: string; seq: bigint }>>(
      Prisma.sql`SELECT id, metrics_seq AS seq FROM node WHERE id = ANY(${nodeIds}::uuid[])`,
    );
    const lastSeq = new Map(stored.map((row) => [row.id, Number(row.seq)]));
    const accepted: Pending[] = [];
    for (const entry of [...batch].sort((a, b) => a.report.seq - b.report.seq)) {
      const last = lastSeq.get(entry.node.id) ?? 0;
      if (entry.report.seq <= last) {
        const reason = entry.report.seq === last ? "duplicate" : "out_of_order";
        this.rejections.reject("mx", reason, `seq ${entry.report.seq} is not after ${last}`);
        entry.msg.term(reason);
        continue;
      }
      lastSeq.set(entry.node.id, entry.report.seq);
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
        entries.flatMap((entry) => {
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
          return series;
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

    const newest = new Map<string, number>();
    for (const entry of done)
      newest.set(entry.node.id, Math.max(newest.get(entry.node.id) ?? 0, entry.report.seq));
    await this.db.$executeRaw(Prisma.sql`
      UPDATE node SET metrics_seq = GREATEST(node.metrics_seq, v.seq)
      FROM unnest(${[...newest.keys()]}::uuid[], ${[...newest.values()]}::bigint[]) AS v(id, seq)
      WHERE node.id = v.id`);
    for (const entry of done) entry.msg.ack();
    this.metrics.accepted.inc({ type: "mx" }, done.length);
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
