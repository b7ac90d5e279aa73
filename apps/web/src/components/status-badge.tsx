import styles from "./status-badge.module.css";

export type NodeStatus = "pending" | "online" | "offline" | "revoked";

export function StatusBadge({ status }: { status: NodeStatus }) {
  return <span className={`${styles.badge} ${styles[status]}`}>{status}</span>;
}
