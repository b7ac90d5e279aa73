import { changedFields } from "./audit-changes";

/** The fields an audited change touched: before in red, after in green. */
export function AuditDiff(props: { before: unknown; after: unknown }) {
  const changes = changedFields(props.before, props.after);
  if (changes.length === 0) return <p className="text-muted-foreground">No field changed.</p>;
  return (
    <table className="mt-2 w-full text-left font-mono text-xs">
      <thead className="text-muted-foreground">
        <tr>
          <th className="pr-2 font-medium">Field</th>
          <th className="pr-2 font-medium">Before</th>
          <th className="font-medium">After</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((change) => (
          <tr key={change.field} data-testid="audit-diff-row" className="align-top">
            <td className="pr-2">{change.field}</td>
            <td className="pr-2 break-all text-offline">{change.before}</td>
            <td className="break-all text-online">{change.after}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
