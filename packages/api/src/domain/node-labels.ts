/**
 * Adding and removing labels on many nodes at once: the nodes a selector picks, or a list of ids.
 * One UPDATE statement, so 100,000 nodes change together or not at all.
 */
import { type Db, Prisma } from "@edgefleet/db";
import { z } from "zod";
import { nodeFilterSql } from "./nodes";
import { LABEL_KEY, LABEL_VALUE, parseSelector } from "./selectors";

const labelKey = z.string().regex(LABEL_KEY, {
  error: (issue) =>
    `invalid label key ${JSON.stringify(issue.input)} (letters, digits, - _ . and one / prefix)`,
});
const labelValue = z.string().regex(LABEL_VALUE, {
  error: (issue) => `invalid label value ${JSON.stringify(issue.input)} (up to 63 letters, digits, - _ .)`,
});

export const BULK_IDS_MAX = 1000;

export const bulkUpdateLabelsInput = z
  .object({
    target: z.union([
      z.object({ selector: z.string().trim().min(1, "a selector is required").max(1000) }),
      z.object({ ids: z.array(z.uuid()).min(1).max(BULK_IDS_MAX) }),
    ]),
    add: z.record(labelKey, labelValue).default({}),
    remove: z.array(labelKey).max(100).default([]),
  })
  .refine((input) => Object.keys(input.add).length + input.remove.length > 0, {
    message: "nothing to change: give labels to add or keys to remove",
  })
  .refine((input) => !input.remove.some((key) => Object.hasOwn(input.add, key)), {
    message: "a key cannot be both added and removed",
  });

export const bulkUpdateLabelsOutput = z.object({ updated: z.number().int() });

/** Throws SelectorSyntaxError for a bad selector. Returns how many nodes were updated. */
export async function bulkUpdateLabels(
  db: Db,
  organizationId: string,
  input: z.output<typeof bulkUpdateLabelsInput>,
): Promise<z.infer<typeof bulkUpdateLabelsOutput>> {
  const target =
    "selector" in input.target
      ? nodeFilterSql(organizationId, { selector: parseSelector(input.target.selector) })
      : Prisma.sql`${nodeFilterSql(organizationId, {})} AND n.id IN (
          SELECT value::uuid FROM jsonb_array_elements_text(${JSON.stringify(input.target.ids)}::jsonb))`;
  const updated = await db.$executeRaw`
    UPDATE node n
    SET labels = (n.labels - ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(input.remove)}::jsonb)))
                 || ${JSON.stringify(input.add)}::jsonb,
        updated_at = now()
    WHERE ${target}`;
  return { updated };
}
