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
 * Apps and interfaces outside `allowed` are left out and counted in `dropped`; so is a name the
 * report repeats (`repeated`: the first is kept). No two of the series have equal labels.
 */
export function seriesOfReport(
  organizationId: string,
  nodeId: string,
  report: MetricsReport,
  allowed: SeriesAllowance,
): { series: Series[]; dropped: { apps: number; interfaces: number; repeated: number } } {
  const base = { org: organizationId, node: nodeId };
  // A report stamped 0 (a node whose clock is unset) counts as now: prometheus-remote-write, which
  // encoded the gateway's writes before encodeWriteRequest, sent every timestamp 0 as now.
  const at = report.at || Date.now();
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
  const dropped = { apps: 0, interfaces: 0, repeated: 0 };
  // An interface or app named twice in one report (a node's mistake) is taken once, the first
  // time: two samples of one series at one timestamp would make Mimir refuse them, and the
  // refusal would count against every node of the organization's batch.
  const seenInterfaces = new Set<string>();
  for (const net of report.net) {
    if (seenInterfaces.has(net.if)) {
      dropped.repeated++;
      continue;
    }
    seenInterfaces.add(net.if);
    if (!allowed.interfaces.has(net.if)) {
      dropped.interfaces++;
      continue;
    }
    add("edgefleet_node_network_receive_bytes_total", net.rx, { interface: net.if });
    add("edgefleet_node_network_transmit_bytes_total", net.tx, { interface: net.if });
  }
  const seenApps = new Set<string>();
  for (const app of report.apps) {
    if (seenApps.has(app.app)) {
      dropped.repeated++;
      continue;
    }
    seenApps.add(app.app);
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

/** The series of one report, and the node that sent it. */
export interface ReportSeries {
  nodeId: string;
  series: readonly Series[];
}

/**
 * The series of a batch (reports in batch order) with the series of several reports of one node
 * merged: one series per labels, samples in time order, in the order of first appearance. Series
 * of two nodes never merge (each has its node's `node` label) and the series of one report are
 * distinct (seriesOfReport), so only the series of nodes with more than one report in the batch
 * are matched by labels; the rest pass as they are. The input is left as it is.
 */
export function mergeSeries(reports: readonly ReportSeries[]): Series[] {
  const reportsOfNode = new Map<string, number>();
  for (const { nodeId } of reports) reportsOfNode.set(nodeId, (reportsOfNode.get(nodeId) ?? 0) + 1);
  const merged: Series[] = [];
  const indexOfLabels = new Map<string, number>();
  for (const { nodeId, series } of reports) {
    if (reportsOfNode.get(nodeId) === 1) {
      for (const one of series) merged.push(one);
      continue;
    }
    for (const one of series) {
      const key = labelsKey(one.labels);
      const index = indexOfLabels.get(key);
      const first = index === undefined ? undefined : merged[index];
      if (index === undefined || first === undefined) {
        indexOfLabels.set(key, merged.length);
        merged.push(one);
      } else {
        // The samples of each series are in time order (one per report); the sort is stable.
        merged[index] = { labels: first.labels, samples: first.samples.concat(one.samples).sort(byTime) };
      }
    }
  }
  return merged;
}

const byTime = (a: { timestamp: number }, b: { timestamp: number }) => a.timestamp - b.timestamp;

/**
 * Names and values in order, NUL-separated: no name or value holds a NUL (the protocol's text
 * refuses it, as Postgres does), so different labels give different keys. Labels are compared in
 * their order: seriesOfReport adds them in one order per metric name (`__name__`, org, node, then
 * the metric's own, always in the same order), so equal label sets come in equal order.
 */
function labelsKey(labels: Series["labels"]): string {
  let key = "";
  for (const name in labels) key += `${name}\u0000${labels[name]}\u0000`;
  return key;
}
