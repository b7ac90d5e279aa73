/** A table's label said again elsewhere: in the middle of a sentence, or as its name in the address. */

/** "Audit log" → "audit log", but "API keys" stays as written: the label in the middle of a sentence. */
export function lowerFirst(label: string): string {
  return /^[A-Z][a-z]/.test(label) ? `${label[0]?.toLowerCase()}${label.slice(1)}` : label;
}

/** "Audit log" → "audit-log", "API keys" → "api-keys": a table's name derived from its label. */
export function kebabCase(label: string): string {
  return label
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
}
