import styles from "./audit.module.css";

/** One line per field that differs between before and after (top level; nested values as JSON). */
export function changedFields(
  before: unknown,
  after: unknown,
): Array<{ field: string; before: string; after: string }> {
  const asRecord = (value: unknown): Record<string, unknown> =>
    value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const show = (value: unknown) => (value === undefined ? "—" : JSON.stringify(value));
  const b = asRecord(before);
  const a = asRecord(after);
  const fields = [...new Set([...Object.keys(b), ...Object.keys(a)])].sort();
  return fields
    .filter((field) => show(b[field]) !== show(a[field]))
    .map((field) => ({ field, before: show(b[field]), after: show(a[field]) }));
}

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
