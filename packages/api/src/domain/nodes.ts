/**
 * Node inventory queries for one organization, built for 100,000 nodes: keyset pagination on
 * any sort column (tiebreak by id), label selectors answered by the GIN index on node.labels,
 * and free-text search answered by the trigram indexes on node and site names.
 *
 * The list is one SQL statement on the base client with an explicit `organization_id` filter
 * (the tenant-scoped client refuses raw SQL); every other read goes through `tenantDb`.
 */
import { type Db, Prisma, type tenantDb } from "@edgefleet/db";
import { z } from "zod";
import {
  type ListNodesInput,
  listNodesInput,
  NODE_PAGE_MAX,
  type NodeSortField,
  type NodeStatus,
  nodeSortFields,
  nodeStatuses,
  nodeStatusSchema,
} from "../schemas/nodes";
import { type SelectorRequirement, selectorSql } from "./selectors";

export type { ListNodesInput, NodeSortField, NodeStatus };
// Input schemas live in ../schemas (zod only) so the console can validate with them too.
export { listNodesInput, NODE_PAGE_MAX, nodeSortFields, nodeStatuses, nodeStatusSchema };

/** Prisma client scoped to one organization (see `tenantDb` in @edgefleet/db). */
export type TenantDb = ReturnType<typeof tenantDb>;

export const labelsSchema = z.record(z.string(), z.string());

export const nodeSummary = z.object({
  id: z.string(),
  name: z.string(),
  site: z.string().nullable(),
  status: nodeStatusSchema,
  labels: labelsSchema,
  agentVersion: z.string().nullable(),
  lastSeenAt: z.date().nullable(),
});
export type NodeSummary = z.infer<typeof nodeSummary>;

export const listNodesOutput = z.object({
  items: z.array(nodeSummary),
  nextCursor: z.string().nullable(),
});
export type ListNodesOutput = z.infer<typeof listNodesOutput>;

/** Thrown for a cursor that was not made by `listNodes` for the same sort. */
export class InvalidCursorError extends Error {
  override name = "InvalidCursorError";
}

/**
 * Sort key per field, with NULLs mapped to the lowest value so that row comparison works for
 * keyset pagination, and the SQL type the cursor value is cast back to.
 */
const SORT_KEYS: Record<NodeSortField, { expr: Prisma.Sql; type: Prisma.Sql }> = {
  name: { expr: Prisma.sql`n.name`, type: Prisma.sql`text` },
  status: { expr: Prisma.sql`n.status`, type: Prisma.sql`node_status` },
  lastSeenAt: {
    expr: Prisma.sql`COALESCE(n.last_seen_at, '-infinity'::timestamptz)`,
    type: Prisma.sql`timestamptz`,
  },
  agentVersion: { expr: Prisma.sql`COALESCE(n.agent_version, '')`, type: Prisma.sql`text` },
};

const cursorSchema = z.object({
  f: z.enum(nodeSortFields),
  d: z.enum(["asc", "desc"]),
  v: z.string(),
  id: z.uuid(),
});
type Cursor = z.infer<typeof cursorSchema>;

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

function decodeCursor(raw: string, sort: { field: NodeSortField; direction: "asc" | "desc" }): Cursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    throw new InvalidCursorError("invalid cursor: not one returned by node.list");
  }
  const cursor = cursorSchema.safeParse(parsed);
  if (!cursor.success) throw new InvalidCursorError("invalid cursor: not one returned by node.list");
  if (cursor.data.f !== sort.field || cursor.data.d !== sort.direction) {
    throw new InvalidCursorError(
      "invalid cursor: it belongs to another sort order; start from the first page",
    );
  }
  return cursor.data;
}

/** `%`, `_` and `\` in user text are literal characters, not LIKE wildcards. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

interface NodeListRow {
  id: string;
  name: string;
  site: string | null;
  status: NodeStatus;
  labels: unknown;
  agentVersion: string | null;
  lastSeenAt: Date | null;
  sortKey: string;
}

/** Conditions shared by the list and by bulk label updates. */
export function nodeFilterSql(
  organizationId: string,
  filter: { status?: NodeStatus; search?: string; selector?: SelectorRequirement[] },
): Prisma.Sql {
  const conditions = [Prisma.sql`n.organization_id = ${organizationId}::uuid`];
  if (filter.status) conditions.push(Prisma.sql`n.status = ${filter.status}::node_status`);
  if (filter.selector?.length) conditions.push(selectorSql(filter.selector, Prisma.sql`n.labels`));
  if (filter.search) {
    const pattern = likePattern(filter.search);
    // Two index-backed halves (trigram on node.name, and the site's nodes via site_id) OR-ed.
    conditions.push(Prisma.sql`(n.name ILIKE ${pattern} OR n.site_id IN (
      SELECT s.id FROM site s WHERE s.organization_id = ${organizationId}::uuid AND s.name ILIKE ${pattern}))`);
  }
  return Prisma.join(conditions, " AND ");
}

export async function listNodes(
  db: Db,
  organizationId: string,
  input: z.output<typeof listNodesInput> & { selectorRequirements?: SelectorRequirement[] },
): Promise<ListNodesOutput> {
  const { field, direction } = input.sort;
  const key = SORT_KEYS[field];
  const desc = direction === "desc";
  const conditions = [
    nodeFilterSql(organizationId, {
      ...(input.status ? { status: input.status } : {}),
      ...(input.search ? { search: input.search } : {}),
      ...(input.selectorRequirements ? { selector: input.selectorRequirements } : {}),
    }),
  ];
  if (input.cursor) {
    const cursor = decodeCursor(input.cursor, input.sort);
    const after = Prisma.sql`(${cursor.v}::${key.type}, ${cursor.id}::uuid)`;
    conditions.push(
      desc ? Prisma.sql`(${key.expr}, n.id) < ${after}` : Prisma.sql`(${key.expr}, n.id) > ${after}`,
    );
  }
  const order = desc ? Prisma.sql`DESC` : Prisma.sql`ASC`;
  // The page is picked on plain columns; only its rows are joined to their site and cast to
  // text. With a sort no index serves (last seen), every matching row goes through the top-N
  // sort, and per-row casts and the join cost more than the sort itself (measured at 100,000
  // nodes: docs/benchmarks/console-api.md).
  const rows = await db.$queryRaw<NodeListRow[]>`
    SELECT p.id::text AS id, p.name, s.name AS site, p.status::text AS status, p.labels,
           p.agent_version AS "agentVersion", p.last_seen_at AS "lastSeenAt", p.sort_key::text AS "sortKey"
    FROM (
      SELECT n.id, n.name, n.site_id, n.status, n.labels, n.agent_version, n.last_seen_at,
             ${key.expr} AS sort_key
      FROM node n
      WHERE ${Prisma.join(conditions, " AND ")}
      ORDER BY ${key.expr} ${order}, n.id ${order}
      LIMIT ${input.limit + 1}
    ) p LEFT JOIN site s ON s.id = p.site_id
    ORDER BY p.sort_key ${order}, p.id ${order}`;
  // One extra row tells whether another page exists without a count query.
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    items: page.map((row) => ({
      id: row.id,
      name: row.name,
      site: row.site,
      status: row.status,
      labels: labelsSchema.parse(row.labels),
      agentVersion: row.agentVersion,
      lastSeenAt: row.lastSeenAt,
    })),
    nextCursor:
      rows.length > input.limit && last
        ? encodeCursor({ f: field, d: direction, v: last.sortKey, id: last.id })
        : null,
  };
}

/**
 * "Degraded" = online, but not doing its job: at least one of its app instances is in state
 * `failed` (the agent gave up on it, or it crashed and is not running). A late heartbeat does not
 * count: the gateway turns a node whose heartbeats stop offline after three intervals plus slack,
 * which is the stronger signal. Offline, pending and revoked nodes are never degraded.
 */
export const degradedNodeWhere = {
  status: "online",
  appInstances: { some: { state: "failed" } },
} as const satisfies Prisma.NodeWhereInput;

/** Why a node counts as degraded (empty: it does not); the same rule as degradedNodeWhere. */
export function degradedReasons(node: {
  status: NodeStatus;
  apps: Array<{ app: string; state: string }>;
}): string[] {
  if (node.status !== "online") return [];
  return node.apps.filter((app) => app.state === "failed").map((app) => `app ${app.app} failed`);
}

export const nodeCountsOutput = z.object({
  total: z.number().int(),
  byStatus: z.record(nodeStatusSchema, z.number().int()),
  /** Online nodes with at least one app instance in state `failed` (see degradedNodeWhere). */
  degraded: z.number().int(),
});
export type NodeCounts = z.infer<typeof nodeCountsOutput>;

export async function countNodesByStatus(db: TenantDb): Promise<NodeCounts> {
  const [groups, degraded] = await Promise.all([
    db.node.groupBy({ by: ["status"], _count: { _all: true } }),
    db.node.count({ where: degradedNodeWhere }),
  ]);
  const byStatus: Record<NodeStatus, number> = { pending: 0, online: 0, offline: 0, revoked: 0 };
  for (const group of groups) byStatus[group.status] = group._count._all;
  return { total: Object.values(byStatus).reduce((sum, n) => sum + n, 0), byStatus, degraded };
}

export const nodeBreakdownOutput = z.object({
  byAgentVersion: z.array(z.object({ agentVersion: z.string().nullable(), total: z.number().int() })),
});

/** Nodes per agent version (most common first), for the fleet overview. */
export async function countNodesByAgentVersion(db: TenantDb): Promise<z.infer<typeof nodeBreakdownOutput>> {
  const groups = await db.node.groupBy({ by: ["agentVersion"], _count: { _all: true } });
  return {
    byAgentVersion: groups
      .map((g) => ({ agentVersion: g.agentVersion, total: g._count._all }))
      .sort((a, b) => b.total - a.total || (a.agentVersion ?? "").localeCompare(b.agentVersion ?? "")),
  };
}
