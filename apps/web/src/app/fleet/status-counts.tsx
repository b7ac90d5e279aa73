import type { RouterOutputs } from "@edgefleet/api";
import { StatusBadge } from "~/components/status-badge";
import styles from "./fleet.module.css";

type NodeCounts = RouterOutputs["node"]["counts"];
type NodeStatus = keyof NodeCounts["byStatus"];

// Type-only import from the API: its runtime code (Prisma) must stay out of the browser bundle.
const statusOrder = ["online", "offline", "pending", "revoked"] as const satisfies readonly NodeStatus[];

export function StatusCounts({ counts }: { counts: NodeCounts }) {
  return (
    <ul className={styles.counts} aria-label="Nodes by status">
      <li>
        <strong data-testid="count-total">{counts.total}</strong> nodes
      </li>
      {statusOrder.map((status) => (
        <li key={status}>
          <StatusBadge status={status} />{" "}
          <strong data-testid={`count-${status}`}>{counts.byStatus[status] ?? 0}</strong>
        </li>
      ))}
      <li title="Online nodes with a failed app">
        <span className={styles.degraded}>degraded</span>{" "}
        <strong data-testid="count-degraded">{counts.degraded}</strong>
      </li>
    </ul>
  );
}
