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
