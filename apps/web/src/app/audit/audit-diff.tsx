import styles from "./audit.module.css";
import { changedFields } from "./audit-changes";

export function AuditDiff(props: { before: unknown; after: unknown }) {
  const changes = changedFields(props.before, props.after);
  if (changes.length === 0) return <p className={styles.muted}>No field changed.</p>;
  return (
    <table className={styles.diff}>
      <thead>
        <tr>
          <th>Field</th>
          <th>Before</th>
          <th>After</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((change) => (
          <tr key={change.field} data-testid="audit-diff-row">
            <td>{change.field}</td>
            <td className={styles.removed}>{change.before}</td>
            <td className={styles.added}>{change.after}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
