/**
 * Adding and removing labels on many nodes at once: the nodes a selector picks, or a list of ids.
 * One UPDATE statement, so 100,000 nodes change together or not at all.
 */
import { type Db, Prisma } from "@edgefleet/db";
import { z } from "zod";
import { BULK_IDS_MAX, bulkUpdateLabelsInput } from "../schemas/labels";
import { nodeFilterSql } from "./nodes";
import { parseSelector } from "./selectors";

// Input schemas live in ../schemas (zod only) so the console can validate with them too.
export { BULK_IDS_MAX, bulkUpdateLabelsInput };

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
