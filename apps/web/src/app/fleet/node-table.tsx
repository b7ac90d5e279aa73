import type { RouterOutputs } from "@edgefleet/api";
import styles from "./fleet.module.css";

type NodeRow = RouterOutputs["node"]["list"]["items"][number];

const relativeTime = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

function lastSeen(date: Date | null): string {
  if (!date) return "never";
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 60) return relativeTime.format(seconds, "second");
  if (abs < 3600) return relativeTime.format(Math.round(seconds / 60), "minute");
  if (abs < 86400) return relativeTime.format(Math.round(seconds / 3600), "hour");
  return relativeTime.format(Math.round(seconds / 86400), "day");
}

export function NodeTable({ nodes }: { nodes: NodeRow[] }) {
  if (nodes.length === 0) return <p className={styles.muted}>No nodes match.</p>;
  return (
    <table className={styles.table} data-testid="node-table">
      <thead>
        <tr>
          <th>Name</th>
          <th>Site</th>
          <th>Status</th>
          <th>Labels</th>
          <th>Agent</th>
          <th>Last seen</th>
        </tr>
      </thead>
      <tbody>
        {nodes.map((node) => (
          <tr key={node.id}>
            <td className="mono" data-testid="node-name">
              {node.name}
            </td>
            <td>{node.site ?? "—"}</td>
            <td>
              <span className={`${styles.badge} ${styles[node.status]}`}>{node.status}</span>
            </td>
            <td>
              {Object.entries(node.labels).map(([key, value]) => (
                <span key={key} className={styles.label}>
                  {key}={value}
                </span>
              ))}
            </td>
            <td className="mono">{node.agentVersion ?? "—"}</td>
            <td title={node.lastSeenAt?.toISOString()}>{lastSeen(node.lastSeenAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
