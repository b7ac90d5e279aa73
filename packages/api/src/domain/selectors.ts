/**
 * Label selectors: the pure parser and matcher live in @edgefleet/selectors (one implementation,
 * shared with the rollout planner); this module re-exports them and adds the SQL form.
 */
import { Prisma } from "@edgefleet/db";
import type { SelectorRequirement } from "@edgefleet/selectors";

export {
  LABEL_KEY,
  LABEL_VALUE,
  matchesSelector,
  parseSelector,
  SELECTOR_MAX_LENGTH,
  type SelectorRequirement,
  SelectorSyntaxError,
} from "@edgefleet/selectors";

/**
 * SQL condition over `<column>` (a JSONB label map). Positive requirements use containment
 * (`@>`) and key existence (`?`), which the GIN index on node.labels answers; negative ones are
 * the NOT of those, evaluated on the rows the other conditions leave.
 */
export function selectorSql(requirements: SelectorRequirement[], column = Prisma.sql`labels`): Prisma.Sql {
  if (requirements.length === 0) return Prisma.sql`TRUE`;
  return Prisma.join(
    requirements.map((r) => requirementSql(r, column)),
    " AND ",
  );
}

function requirementSql(r: SelectorRequirement, column: Prisma.Sql): Prisma.Sql {
  const contains = (value: string) => Prisma.sql`${column} @> ${JSON.stringify({ [r.key]: value })}::jsonb`;
  switch (r.op) {
    case "eq":
      return contains(r.value);
    case "neq":
      return Prisma.sql`NOT ${contains(r.value)}`;
    case "in":
      return Prisma.sql`(${Prisma.join(r.values.map(contains), " OR ")})`;
    case "notin":
      return Prisma.sql`NOT (${Prisma.join(r.values.map(contains), " OR ")})`;
    case "exists":
      return Prisma.sql`${column} ? ${r.key}`;
    case "notexists":
      return Prisma.sql`NOT (${column} ? ${r.key})`;
  }
}
