/**
 * Parses the console's label edit fields: `k=v, k2=v2` to add and `k1, k2` to remove. Only the
 * shape is checked here; the API validates keys and values and explains what is wrong.
 */
export function parseLabelAssignments(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of text.split(",")) {
    const item = part.trim();
    if (!item) continue;
    const eq = item.indexOf("=");
    if (eq <= 0) throw new Error(`"${item}" is not key=value`);
    labels[item.slice(0, eq).trim()] = item.slice(eq + 1).trim();
  }
  return labels;
}

export function parseLabelKeys(text: string): string[] {
  return text
    .split(",")
    .map((key) => key.trim())
    .filter(Boolean);
}
