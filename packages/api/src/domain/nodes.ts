/**
 * Node inventory queries for one organization. Plain functions over a tenant-scoped client so
 * they can be reused by the REST API and tested without tRPC.
 */
import type { tenantDb } from "@edgefleet/db";
import { z } from "zod";

/** Prisma client scoped to one organization (see `tenantDb` in @edgefleet/db). */
export type TenantDb = ReturnType<typeof tenantDb>;

export const nodeStatuses = ["pending", "online", "offline", "revoked"] as const;
export const nodeStatusSchema = z.enum(nodeStatuses);
export type NodeStatus = z.infer<typeof nodeStatusSchema>;

export const NODE_PAGE_MAX = 200;

export const listNodesInput = z.object({
  limit: z.number().int().min(1).max(NODE_PAGE_MAX).default(50),
  /** Opaque to clients: the name of the last node of the previous page (names are unique per org). */
  cursor: z.string().min(1).max(255).nullish(),
  /** Free text matched (case-insensitively) against the node name and its site name. */
  search: z.string().trim().max(100).optional(),
  status: nodeStatusSchema.optional(),
});
export type ListNodesInput = z.input<typeof listNodesInput>;

export const nodeSummary = z.object({
  id: z.string(),
  name: z.string(),
  site: z.string().nullable(),
  status: nodeStatusSchema,
  labels: z.record(z.string(), z.string()),
  agentVersion: z.string().nullable(),
  lastSeenAt: z.date().nullable(),
});
export type NodeSummary = z.infer<typeof nodeSummary>;

export const listNodesOutput = z.object({
  items: z.array(nodeSummary),
  nextCursor: z.string().nullable(),
});
export type ListNodesOutput = z.infer<typeof listNodesOutput>;

/** Keyset pagination by name: stable under inserts and cheap at any depth (unique index on org+name). */
export async function listNodes(
  db: TenantDb,
  input: z.output<typeof listNodesInput>,
): Promise<ListNodesOutput> {
  const search = input.search ? input.search : undefined;
  const rows = await db.node.findMany({
    where: {
      ...(input.cursor ? { name: { gt: input.cursor } } : {}),
      ...(input.status ? { status: input.status } : {}),
      ...(search
        ? {
            OR: [
              { name: { contains: search, mode: "insensitive" } },
              { site: { name: { contains: search, mode: "insensitive" } } },
            ],
          }
        : {}),
    },
    orderBy: { name: "asc" },
    // One extra row tells whether another page exists without a count query.
    take: input.limit + 1,
    select: {
      id: true,
      name: true,
      status: true,
      labels: true,
      agentVersion: true,
      lastSeenAt: true,
      site: { select: { name: true } },
    },
  });
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    items: page.map((row) => ({
      id: row.id,
      name: row.name,
      site: row.site?.name ?? null,
      status: row.status,
      labels: z.record(z.string(), z.string()).parse(row.labels),
      agentVersion: row.agentVersion,
      lastSeenAt: row.lastSeenAt,
    })),
    nextCursor: rows.length > input.limit && last ? last.name : null,
  };
}

export const nodeCountsOutput = z.object({
  total: z.number().int(),
  byStatus: z.record(nodeStatusSchema, z.number().int()),
});
export type NodeCounts = z.infer<typeof nodeCountsOutput>;

export async function countNodesByStatus(db: TenantDb): Promise<NodeCounts> {
  const groups = await db.node.groupBy({ by: ["status"], _count: { _all: true } });
  const byStatus: Record<NodeStatus, number> = { pending: 0, online: 0, offline: 0, revoked: 0 };
  for (const group of groups) byStatus[group.status] = group._count._all;
  return { total: Object.values(byStatus).reduce((sum, n) => sum + n, 0), byStatus };
}
