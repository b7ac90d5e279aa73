/**
 * Chart data for one node, read back from Mimir by PromQL `query_range`. The tenant is the
 * `X-Scope-OrgID` header, always the caller's organization id (never taken from input), so a
 * node id of another organization finds no series. Series names: apps/gateway/src/edge/ingest/
 * mimir-series.ts; counters become per-second rates.
 */
import { z } from "zod";
import type { TenantDb } from "./nodes";

export const METRICS_MAX_RANGE_MS = 31 * 24 * 3600_000;
/** Prometheus refuses more than 11,000 points per series; charts need far fewer. */
export const METRICS_MAX_POINTS = 1100;
const DEFAULT_POINTS = 240;

export const nodeSeriesInput = z
  .object({
    nodeId: z.uuid({ error: "node id must be a UUID" }),
    range: z.object({ from: z.date(), to: z.date() }),
    /** Seconds between points; by default the range split into ~240 points (at least 15 s). */
    step: z.number().int().min(1).max(86_400).optional(),
  })
  .refine((input) => input.range.to > input.range.from, {
    message: "range.to must be after range.from",
    path: ["range"],
  })
  .refine((input) => input.range.to.getTime() - input.range.from.getTime() <= METRICS_MAX_RANGE_MS, {
    message: "range must be at most 31 days",
    path: ["range"],
  })
  .refine(
    (input) =>
      input.step === undefined ||
      (input.range.to.getTime() - input.range.from.getTime()) / 1000 / input.step <= METRICS_MAX_POINTS,
    { message: `step too small: at most ${METRICS_MAX_POINTS} points per series`, path: ["step"] },
  );
export type NodeSeriesInput = z.output<typeof nodeSeriesInput>;

const seriesSchema = z.object({
  /** Labels that tell the series of one chart apart (interface; type and direction). */
  labels: z.record(z.string(), z.string()),
  /** [unix milliseconds, value] */
  points: z.array(z.tuple([z.number(), z.number()])),
});
export type ChartSeries = z.infer<typeof seriesSchema>;

export const CHARTS = [
  "cpu",
  "memoryUsed",
  "memoryTotal",
  "diskUsed",
  "diskTotal",
  "rtt",
  "networkReceive",
  "networkTransmit",
  "controlBytes",
] as const;
export type ChartName = (typeof CHARTS)[number];

export const nodeSeriesOutput = z.object({
  step: z.number().int(),
  charts: z.record(z.enum(CHARTS), z.array(seriesSchema)),
});
export type NodeSeries = z.infer<typeof nodeSeriesOutput>;

/** PromQL per chart; `sel` is the node's series selector, `window` the rate window. */
function queries(sel: string, window: string): Record<ChartName, string> {
  return {
    cpu: `edgefleet_node_cpu_usage_ratio${sel}`,
    memoryUsed: `edgefleet_node_memory_used_bytes${sel}`,
    memoryTotal: `edgefleet_node_memory_total_bytes${sel}`,
    diskUsed: `edgefleet_node_disk_used_bytes${sel}`,
    diskTotal: `edgefleet_node_disk_total_bytes${sel}`,
    rtt: `edgefleet_node_rtt_seconds${sel}`,
    networkReceive: `sum by (interface) (rate(edgefleet_node_network_receive_bytes_total${sel}[${window}]))`,
    networkTransmit: `sum by (interface) (rate(edgefleet_node_network_transmit_bytes_total${sel}[${window}]))`,
    controlBytes: `sum by (type, direction) (rate(edgefleet_node_control_bytes_total${sel}[${window}]))`,
  };
}

/** The metrics store failed or answered something unexpected (not the caller's fault). */
export class MetricsStoreError extends Error {
  override name = "MetricsStoreError";
}

const queryRangeResponse = z.object({
  status: z.literal("success"),
  data: z.object({
    resultType: z.literal("matrix"),
    result: z.array(
      z.object({
        metric: z.record(z.string(), z.string()),
        values: z.array(z.tuple([z.number(), z.string()])),
      }),
    ),
  }),
});

export interface MimirTarget {
  /** Base URL, e.g. http://127.0.0.1:9009 */
  url: string;
  /** X-Scope-OrgID: the organization id. */
  tenant: string;
}

/** One `query_range` call; samples as [ms, value]. */
export async function queryRange(
  mimir: MimirTarget,
  query: string,
  range: { from: Date; to: Date; step: number },
): Promise<ChartSeries[]> {
  const body = new URLSearchParams({
    query,
    start: String(range.from.getTime() / 1000),
    end: String(range.to.getTime() / 1000),
    step: String(range.step),
  });
  let response: Response;
  try {
    response = await fetch(new URL("/prometheus/api/v1/query_range", mimir.url), {
      method: "POST",
      headers: { "X-Scope-OrgID": mimir.tenant, "Content-Type": "application/x-www-form-urlencoded" },
      body,
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new MetricsStoreError(
      `metrics store unreachable: ${error instanceof Error ? error.message : error}`,
    );
  }
  const text = await response.text();
  if (!response.ok)
    throw new MetricsStoreError(`metrics store answered ${response.status}: ${text.slice(0, 300)}`);
  const parsed = queryRangeResponse.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new MetricsStoreError(`unexpected answer from the metrics store: ${text.slice(0, 300)}`);
  return parsed.data.data.result.map((series) => {
    const { __name__: _name, org: _org, node: _node, ...labels } = series.metric;
    return { labels, points: series.values.map(([at, value]) => [Math.round(at * 1000), Number(value)]) };
  });
}

/** Every chart of one node's detail page over the range. */
export async function nodeSeries(
  mimirUrl: string,
  organizationId: string,
  input: NodeSeriesInput,
): Promise<NodeSeries> {
  const rangeSeconds = (input.range.to.getTime() - input.range.from.getTime()) / 1000;
  const step = input.step ?? Math.max(15, Math.ceil(rangeSeconds / DEFAULT_POINTS));
  // A rate needs two samples in its window; agents report about once a minute.
  const window = `${Math.max(2 * step, 180)}s`;
  // Both ids are UUIDs (validated), so they need no escaping inside the label matcher.
  const sel = `{org="${organizationId}",node="${input.nodeId}"}`;
  const range = { from: input.range.from, to: input.range.to, step };
  const entries = await Promise.all(
    Object.entries(queries(sel, window)).map(
      async ([chart, query]) =>
        [chart, await queryRange({ url: mimirUrl, tenant: organizationId }, query, range)] as const,
    ),
  );
  return { step, charts: Object.fromEntries(entries) as Record<ChartName, ChartSeries[]> };
}

const instantQueryResponse = z.object({
  status: z.literal("success"),
  data: z.object({
    resultType: z.literal("vector"),
    result: z.array(
      z.object({ metric: z.record(z.string(), z.string()), value: z.tuple([z.number(), z.string()]) }),
    ),
  }),
});

/** One instant `query` call at `at`; one value per series, keyed by the `node` label. */
export async function queryInstantByNode(
  mimir: MimirTarget,
  query: string,
  at: Date,
): Promise<Map<string, number>> {
  let response: Response;
  try {
    response = await fetch(new URL("/prometheus/api/v1/query", mimir.url), {
      method: "POST",
      headers: { "X-Scope-OrgID": mimir.tenant, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ query, time: String(at.getTime() / 1000) }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new MetricsStoreError(
      `metrics store unreachable: ${error instanceof Error ? error.message : error}`,
    );
  }
  const text = await response.text();
  if (!response.ok)
    throw new MetricsStoreError(`metrics store answered ${response.status}: ${text.slice(0, 300)}`);
  const parsed = instantQueryResponse.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new MetricsStoreError(`unexpected answer from the metrics store: ${text.slice(0, 300)}`);
  const byNode = new Map<string, number>();
  for (const series of parsed.data.data.result) {
    const node = series.metric.node;
    if (node) byNode.set(node, Number(series.value[1]));
  }
  return byNode;
}

export const BANDWIDTH_WINDOWS = { "1h": 3600, "24h": 86_400, "7d": 7 * 86_400 } as const;

export const topBandwidthInput = z.object({
  window: z.enum(Object.keys(BANDWIDTH_WINDOWS) as [keyof typeof BANDWIDTH_WINDOWS]).default("24h"),
  limit: z.coerce.number().int().min(1).max(50).default(10),
});

export const topBandwidthOutput = z.object({
  window: z.enum(Object.keys(BANDWIDTH_WINDOWS) as [keyof typeof BANDWIDTH_WINDOWS]),
  items: z.array(
    z.object({
      nodeId: z.string(),
      /** null when the node no longer exists (deleted since). */
      nodeName: z.string().nullable(),
      receiveBytes: z.number(),
      transmitBytes: z.number(),
      totalBytes: z.number(),
    }),
  ),
});
export type TopBandwidth = z.infer<typeof topBandwidthOutput>;

/**
 * The nodes that moved the most bytes (all interfaces, received + transmitted) over the window,
 * from the agents' interface counters in Mimir: one `topk` query, then the split into received and
 * transmitted for just those nodes, then their names from the inventory.
 */
export async function topBandwidthConsumers(
  mimirUrl: string,
  db: TenantDb,
  organizationId: string,
  input: z.output<typeof topBandwidthInput>,
  now = new Date(),
): Promise<TopBandwidth> {
  const mimir = { url: mimirUrl, tenant: organizationId };
  const window = `${BANDWIDTH_WINDOWS[input.window]}s`;
  const bytes = (direction: "receive" | "transmit", nodes: string) =>
    `sum by (node) (increase(edgefleet_node_network_${direction}_bytes_total{org="${organizationId}"${nodes}}[${window}]))`;
  const totals = await queryInstantByNode(
    mimir,
    `topk(${input.limit}, ${bytes("receive", "")} + ${bytes("transmit", "")})`,
    now,
  );
  // Node ids are UUIDs (the gateway writes them), so they need no regex escaping.
  const ids = [...totals.keys()].filter((id) => /^[0-9a-f-]{36}$/i.test(id));
  if (ids.length === 0) return { window: input.window, items: [] };
  const only = `,node=~"${ids.join("|")}"`;
  const [received, nodes] = await Promise.all([
    queryInstantByNode(mimir, bytes("receive", only), now),
    db.node.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
  ]);
  const names = new Map(nodes.map((node) => [node.id, node.name]));
  const items = ids.map((nodeId) => {
    const totalBytes = totals.get(nodeId) ?? 0;
    const receiveBytes = Math.min(received.get(nodeId) ?? 0, totalBytes);
    return {
      nodeId,
      nodeName: names.get(nodeId) ?? null,
      receiveBytes,
      transmitBytes: totalBytes - receiveBytes,
      totalBytes,
    };
  });
  return { window: input.window, items: items.sort((a, b) => b.totalBytes - a.totalBytes) };
}
