/**
 * Series the gateway writes for alerting (besides the agents' metrics, docs/protocol.md): one
 * info series and one liveness series per node. Rules also read the restart counter per app
 * instance that ingest writes from the agents' status (`{org,node,app,version}`). The
 * agents' series carry only `org` and `node`; rules join this info series to scope by site or
 * node labels and to give every alert its `site`.
 */
export const NODE_INFO_SERIES = "edgefleet_node_info";
export const NODE_ONLINE_SERIES = "edgefleet_node_online";
export const APP_RESTARTS_SERIES = "edgefleet_app_restarts_total";

/**
 * The Prometheus label name of a node label key. Keys may hold `/`, `.` and `-`, which label
 * names cannot: they become `_` (as kube-state-metrics does), so `a.b` and `a_b` share a name.
 */
export function nodeLabelName(key: string): string {
  return `label_${key.replace(/[^A-Za-z0-9_]/g, "_")}`;
}

/** Labels of a node's info series: site name and id ("" when it has none) and its node labels. */
export function nodeInfoLabels(node: {
  id: string;
  siteId: string | null;
  siteName: string | null;
  labels: Record<string, string>;
}): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(node.labels)) labels[nodeLabelName(key)] = value;
  return { ...labels, node: node.id, site: node.siteName ?? "", site_id: node.siteId ?? "" };
}
