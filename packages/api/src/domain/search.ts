/**
 * Find anything by name, for the console's command palette: one small query per kind, all scoped
 * to the organization: nodes and sites by their trigram indexes on names; apps and rollouts
 * (tens per organization, not thousands) by the organization's own index. A new kind adds its
 * name to `searchKinds` and one searcher to `SEARCHERS`; nothing else changes.
 */
import { type Db, Prisma } from "@edgefleet/db";
import { z } from "zod";
import { type SearchKind, searchInput, searchKinds } from "../schemas/search";
import { likePattern } from "./nodes";

export { searchInput };

export const searchHit = z.object({
  kind: z.enum(searchKinds),
  id: z.string(),
  name: z.string(),
  /** A short second line: a node's site and status, a site's description. */
  detail: z.string().nullable(),
});
export type SearchHit = z.infer<typeof searchHit>;
export const searchOutput = z.object({ hits: z.array(searchHit) });

type Searcher = (db: Db, organizationId: string, query: string, limit: number) => Promise<SearchHit[]>;

/** Names that start with the text first, then shorter names (closer matches), then by name. */
const rank = (column: Prisma.Sql, query: string) =>
  Prisma.sql`(${column} ILIKE ${`${query.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`}) DESC, length(${column}), ${column}`;

const SEARCHERS: Record<SearchKind, Searcher> = {
  node: async (db, organizationId, query, limit) => {
    const rows = await db.$queryRaw<Array<{ id: string; name: string; status: string; site: string | null }>>`
      SELECT n.id::text AS id, n.name, n.status::text AS status, s.name AS site
      FROM node n LEFT JOIN site s ON s.id = n.site_id
      WHERE n.organization_id = ${organizationId}::uuid AND n.name ILIKE ${likePattern(query)}
      ORDER BY ${rank(Prisma.sql`n.name`, query)}
      LIMIT ${limit}`;
    return rows.map((row) => ({
      kind: "node",
      id: row.id,
      name: row.name,
      detail: [row.site, row.status].filter(Boolean).join(" · "),
    }));
  },
  site: async (db, organizationId, query, limit) => {
    const rows = await db.$queryRaw<Array<{ id: string; name: string; description: string | null }>>`
      SELECT s.id::text AS id, s.name, s.description
      FROM site s
      WHERE s.organization_id = ${organizationId}::uuid AND s.name ILIKE ${likePattern(query)}
      ORDER BY ${rank(Prisma.sql`s.name`, query)}
      LIMIT ${limit}`;
    return rows.map((row) => ({ kind: "site", id: row.id, name: row.name, detail: row.description }));
  },
  app: async (db, organizationId, query, limit) => {
    const rows = await db.$queryRaw<Array<{ id: string; name: string; description: string | null }>>`
      SELECT a.id::text AS id, a.name, a.description
      FROM app a
      WHERE a.organization_id = ${organizationId}::uuid AND a.name ILIKE ${likePattern(query)}
      ORDER BY ${rank(Prisma.sql`a.name`, query)}
      LIMIT ${limit}`;
    return rows.map((row) => ({ kind: "app", id: row.id, name: row.name, detail: row.description }));
  },
  // A rollout has no name of its own: it is found by its app's name, newest first.
  rollout: async (db, organizationId, query, limit) => {
    const rows = await db.$queryRaw<Array<{ id: string; app: string; version: string; status: string }>>`
      SELECT r.id::text AS id, a.name AS app, v.version, r.status::text AS status
      FROM rollout r JOIN app a ON a.id = r.app_id JOIN app_version v ON v.id = r.app_version_id
      WHERE r.organization_id = ${organizationId}::uuid AND a.name ILIKE ${likePattern(query)}
      ORDER BY r.created_at DESC
      LIMIT ${limit}`;
    return rows.map((row) => ({
      kind: "rollout",
      id: row.id,
      name: `${row.app} → ${row.version}`,
      detail: row.status.replace(/_/g, " "),
    }));
  },
};

export async function searchByName(
  db: Db,
  organizationId: string,
  input: z.output<typeof searchInput>,
): Promise<z.infer<typeof searchOutput>> {
  const perKind = await Promise.all(
    searchKinds.map((kind) => SEARCHERS[kind](db, organizationId, input.query, input.limit)),
  );
  return { hits: perKind.flat() };
}
