import { EVENT_POLICY_KINDS, NODE_INFO_SERIES, NODE_ONLINE_SERIES, nodeInfoLabels } from "@edgefleet/alerts";
import { type Db, Prisma } from "@edgefleet/db";
import { pushTimeseries } from "prometheus-remote-write";
import type { Logger } from "../logger.js";
import type { AlertingMetrics } from "./alerting-metrics.js";
import type { AdvisoryLeader } from "./leader.js";

type Series = {
  labels: { __name__: string; [label: string]: string };
  samples: Array<{ value: number; timestamp: number }>;
};

/**
 * Writes what alert rules join on (from Postgres, which the gateway keeps current): per node an
 * info series (site, site id, node labels) and its liveness (1 online, 0 otherwise). Apps' restart
 * counts are not written here: ingest writes them from the agents' status, with the version
 * (`edgefleet_app_restarts_total{app,version}`), and a second writer would double them. Only for
 * organizations with a metric alert policy, so tenants without alerting pay no series. Written
 * every interval (well inside Mimir's 5-minute lookback). Cost: 2 series per node
 * (docs/protocol.md "Metrics series budget").
 */
export class NodeSeriesPublisher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly pushUrl: string;

  constructor(
    private readonly db: Db,
    mimirUrl: string,
    private readonly leader: AdvisoryLeader,
    private readonly intervalMs: number,
    private readonly metrics: AlertingMetrics,
    private readonly logger: Logger,
  ) {
    this.pushUrl = new URL("/api/v1/push", mimirUrl).toString();
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    void this.tick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.pass()
      .catch((error: unknown) => this.logger.warn({ err: error }, "node series not published"))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async pass(): Promise<void> {
    if (!(await this.leader.isLeader())) return;
    const organizations = await this.db.alertPolicy.findMany({
      where: { enabled: true, kind: { notIn: [...EVENT_POLICY_KINDS] } },
      distinct: ["organizationId"],
      select: { organizationId: true },
    });
    for (const { organizationId } of organizations) await this.publish(organizationId);
  }

  /** One organization's series, at one timestamp. */
  async publish(organizationId: string): Promise<void> {
    const now = Date.now();
    const nodes = await this.db.$queryRaw<
      Array<{
        id: string;
        site_id: string | null;
        site_name: string | null;
        labels: Record<string, string>;
        status: string;
      }>
    >(Prisma.sql`
      SELECT n.id, n.site_id, s.name AS site_name, n.labels, n.status::text AS status
      FROM node n LEFT JOIN site s ON s.id = n.site_id
      WHERE n.organization_id = ${organizationId}::uuid AND n.status <> 'revoked'`);
    const series: Series[] = [];
    const sample = (value: number) => [{ value, timestamp: now }];
    for (const node of nodes) {
      const info = nodeInfoLabels({
        id: node.id,
        siteId: node.site_id,
        siteName: node.site_name,
        labels: node.labels ?? {},
      });
      series.push({
        labels: { __name__: NODE_INFO_SERIES, org: organizationId, ...info },
        samples: sample(1),
      });
      series.push({
        labels: { __name__: NODE_ONLINE_SERIES, org: organizationId, node: node.id },
        samples: sample(node.status === "online" ? 1 : 0),
      });
    }
    if (series.length === 0) return;
    const result = await pushTimeseries(series, {
      url: this.pushUrl,
      headers: {
        "Content-Encoding": "snappy",
        "X-Prometheus-Remote-Write-Version": "0.1.0",
        "X-Scope-OrgID": organizationId,
      },
      fetch: (url, init) =>
        fetch(url, {
          method: init?.method ?? "POST",
          headers: init?.headers,
          body: init?.body as unknown as Uint8Array,
          signal: AbortSignal.timeout(10_000),
        }),
    });
    const ok = result.status >= 200 && result.status < 300;
    this.metrics.seriesWrites.inc({ result: ok ? "ok" : "error" });
    if (!ok)
      this.logger.warn(
        { organizationId, status: result.status, error: result.errorMessage },
        "node series refused by Mimir",
      );
  }
}
