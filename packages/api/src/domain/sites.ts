/** Sites of one organization with how many of their nodes are in each status (fleet overview). */
import { z } from "zod";
import { type NodeStatus, nodeStatusSchema, type TenantDb } from "./nodes";

export const siteSummary = z.object({
  id: z.string().nullable(),
  /** null for the nodes that belong to no site. */
  name: z.string().nullable(),
  description: z.string().nullable(),
  total: z.number().int(),
  byStatus: z.record(nodeStatusSchema, z.number().int()),
});
export const listSitesOutput = z.array(siteSummary);

/** Every site (also those without nodes), then a row for site-less nodes if there are any. */
export async function listSitesWithCounts(db: TenantDb): Promise<z.infer<typeof listSitesOutput>> {
  const [sites, groups] = await Promise.all([
    db.site.findMany({ orderBy: { name: "asc" }, select: { id: true, name: true, description: true } }),
    db.node.groupBy({ by: ["siteId", "status"], _count: { _all: true } }),
  ]);
  const empty = (): Record<NodeStatus, number> => ({ pending: 0, online: 0, offline: 0, revoked: 0 });
  const countsBySite = new Map<string | null, Record<NodeStatus, number>>();
  for (const group of groups) {
    const counts = countsBySite.get(group.siteId) ?? empty();
    counts[group.status] += group._count._all;
    countsBySite.set(group.siteId, counts);
  }
  const row = (id: string | null, name: string | null, description: string | null) => {
    const byStatus = countsBySite.get(id) ?? empty();
    return { id, name, description, byStatus, total: Object.values(byStatus).reduce((a, b) => a + b, 0) };
  };
  const rows = sites.map((site) => row(site.id, site.name, site.description));
  if (countsBySite.has(null)) rows.push(row(null, null, null));
  return rows;
}
