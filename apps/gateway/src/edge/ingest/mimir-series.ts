import type { MetricsReport } from "@edgefleet/agent-sdk/protocol";

/** One remote-write time series (the shape prometheus-remote-write takes). */
export interface Series {
  labels: { __name__: string; [label: string]: string };
  samples: Array<{ value: number; timestamp: number }>;
}

/**
 * What a node may name in label values. Series cost Mimir memory and count against the
 * organization's limit, so a node cannot invent them: per-app series only for apps it is desired
 * to run, interface series only for the few interfaces it has been admitted (issue 8, #5).
 */
export interface SeriesAllowance {
  /** Apps the node is desired to run, by name, with what the gateway knows of their instance. */
  apps: ReadonlyMap<string, AppInstanceFacts>;
  interfaces: ReadonlySet<string>;
}

/**
 * What Postgres knows of one app instance when its metrics arrive: the version label of what runs
 * (as the agent last reported it; null before its first report) and the restarts it counted.
 * The gateway adds them at ingest, so per-app series tell two versions on one fleet apart without
 * a protocol change (a MetricsReport names apps, not versions).
 */
export interface AppInstanceFacts {
  version: string | null;
  restarts: number;
}

/**
 * Series of one MetricsReport (docs/protocol.md "Metrics"). Every series carries `org`
 * (organization id) and `node` (node id); the tenant is also the request's X-Scope-OrgID.
 * Budget per node: 6 host series + 2 per interface (≤ 4) + 3 per desired app + 2 per control
 * message type and direction used (≤ 7 types), as in docs/protocol.md "Metrics series budget".
 * Apps and interfaces outside `allowed` are left out and counted in `dropped`.
 */
export function seriesOfReport(
  organizationId: string,
  nodeId: string,
  report: MetricsReport,
  allowed: SeriesAllowance,
): { series: Series[]; dropped: { apps: number; interfaces: number } } {
  const base = { org: organizationId, node: nodeId };
  const at = report.at;
  const series: Series[] = [];
  const add = (name: string, value: number, labels: Record<string, string> = {}) => {
    series.push({ labels: { __name__: name, ...base, ...labels }, samples: [{ value, timestamp: at }] });
  };
  add("edgefleet_node_cpu_usage_ratio", report.cpu / 1000);
  add("edgefleet_node_memory_used_bytes", report.mu);
  add("edgefleet_node_memory_total_bytes", report.mt);
  add("edgefleet_node_disk_used_bytes", report.du);
  add("edgefleet_node_disk_total_bytes", report.dt);
  if (report.rtt !== undefined) add("edgefleet_node_rtt_seconds", report.rtt / 1_000_000);
  const dropped = { apps: 0, interfaces: 0 };
  for (const net of report.net) {
    if (!allowed.interfaces.has(net.if)) {
      dropped.interfaces++;
      continue;
    }
    add("edgefleet_node_network_receive_bytes_total", net.rx, { interface: net.if });
    add("edgefleet_node_network_transmit_bytes_total", net.tx, { interface: net.if });
  }
  for (const app of report.apps) {
    const facts = allowed.apps.get(app.app);
    if (!facts) {
      dropped.apps++;
      continue;
    }
    // `version` is what runs; without a status report yet it is left out (an empty label).
    const labels: Record<string, string> =
      facts.version === null ? { app: app.app } : { app: app.app, version: facts.version };
    add("edgefleet_app_cpu_usage_ratio", app.cpu / 1000, labels);
    add("edgefleet_app_memory_bytes", app.mem, labels);
    add("edgefleet_app_restarts_total", facts.restarts, labels);
  }
  for (const [type, bytes] of Object.entries(report.ctl)) {
    if (!bytes) continue;
    // A direction a type never uses (nothing ever comes back for a heartbeat) costs no series.
    if (bytes[0] > 0) add("edgefleet_node_control_bytes_total", bytes[0], { type, direction: "sent" });
    if (bytes[1] > 0) add("edgefleet_node_control_bytes_total", bytes[1], { type, direction: "received" });
  }
  return { series, dropped };
}

/** Interfaces one node may have series for (docs/protocol.md: at most 4 besides lo). */
export const MAX_INTERFACES_PER_NODE = 4;

/**
 * The interface names each node has been admitted, first come first served up to
 * MAX_INTERFACES_PER_NODE, so a node renaming its interfaces every report cannot create series
 * without end. Held per gateway process (bounded LRU over nodes): a restart re-admits from
 * the next reports, and N replicas allow at most N × 4 names per node.
 */
export class InterfaceAllowance {
  private readonly byNode = new Map<string, string[]>();

  constructor(private readonly maxNodes = 200_000) {}

  admit(nodeId: string, names: readonly string[]): Set<string> {
    let known = this.byNode.get(nodeId);
    if (known) this.byNode.delete(nodeId);
    else known = [];
    for (const name of [...names].sort()) {
      if (known.length >= MAX_INTERFACES_PER_NODE) break;
      if (!known.includes(name)) known.push(name);
    }
    this.byNode.set(nodeId, known);
    if (this.byNode.size > this.maxNodes) {
      const oldest = this.byNode.keys().next().value;
      if (oldest !== undefined) this.byNode.delete(oldest);
    }
    return new Set(known);
  }
}

/** Merges series with identical labels (several reports of one node in a batch), samples in time order. */
export function mergeSeries(all: Series[]): Series[] {
  const byKey = new Map<string, Series>();
  for (const one of all) {
    const key = JSON.stringify(Object.entries(one.labels).sort(([a], [b]) => a.localeCompare(b)));
    const existing = byKey.get(key);
    if (existing) existing.samples.push(...one.samples);
    else byKey.set(key, { labels: one.labels, samples: [...one.samples] });
  }
  for (const one of byKey.values()) one.samples.sort((a, b) => a.timestamp - b.timestamp);
  return [...byKey.values()];
}
