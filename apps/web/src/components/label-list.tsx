/** A node's or token's labels as `key=value` chips that wrap. */
export function LabelList(props: { labels: Record<string, string>; className?: string }) {
  const entries = Object.entries(props.labels).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return <span className="text-muted-foreground">—</span>;
  return (
    <span className={`flex flex-wrap justify-end gap-1 md:justify-start ${props.className ?? ""}`}>
      {entries.map(([key, value]) => (
        <span
          key={key}
          className="rounded border bg-muted px-1.5 py-px font-mono text-xs text-muted-foreground"
        >
          {key}={value}
        </span>
      ))}
    </span>
  );
}
