import styles from "./fleet.module.css";

const ORDER = ["online", "offline", "pending", "revoked"] as const;
type Status = (typeof ORDER)[number];

/** Shares of nodes per status as one bar (green online, red offline, …); empty when there are none. */
export function StatusBar(props: { byStatus: Partial<Record<Status, number>>; label: string }) {
  const total = ORDER.reduce((sum, status) => sum + (props.byStatus[status] ?? 0), 0);
  const parts = ORDER.filter((status) => (props.byStatus[status] ?? 0) > 0);
  return (
    <div className={styles.statusBar} role="img" aria-label={props.label}>
      {parts.map((status) => {
        const count = props.byStatus[status] ?? 0;
        return (
          <span
            key={status}
            className={styles[`bar-${status}`]}
            style={{ flexGrow: count }}
            title={`${status}: ${count} of ${total}`}
          />
        );
      })}
    </div>
  );
}
