/**
 * Moving a node to another site of its organization, or to none. A node's credentials name its
 * site in every subject (issue 8 #2: a site's leaf carries only its own nodes), so the move is a
 * credentials change: the gateway sends the node new ones at once (or at its next Hello), and from
 * then on it reaches the hub only through its new site's leaf, or directly; through the old site's
 * leaf its messages no longer pass (docs/protocol.md "Credentials").
 */
import { type Db, moveNodeToSite, type TenantDb } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { moveNodeInput } from "../schemas/nodes";

export { moveNodeInput };

export const nodeSiteOutput = z.object({
  id: z.string(),
  siteId: z.string().nullable(),
  site: z.string().nullable(),
});
type NodeSite = z.infer<typeof nodeSiteOutput>;

async function nodeSite(db: TenantDb, id: string): Promise<NodeSite & { status: string }> {
  const node = await db.node.findFirst({
    where: { id },
    select: { id: true, siteId: true, status: true, site: { select: { name: true } } },
  });
  if (!node) throw new TRPCError({ code: "NOT_FOUND", message: `node ${id} not found` });
  return { id: node.id, siteId: node.siteId, site: node.site?.name ?? null, status: node.status };
}

/** NOT_FOUND for a node or site of another organization; CONFLICT for a revoked node. */
export async function moveNode(
  db: Db,
  scoped: TenantDb,
  organizationId: string,
  input: z.output<typeof moveNodeInput>,
): Promise<{ before: NodeSite; after: NodeSite }> {
  const { status, ...before } = await nodeSite(scoped, input.id);
  if (status === "revoked")
    throw new TRPCError({
      code: "CONFLICT",
      message: `node ${input.id} is revoked: it has no credentials to move`,
    });
  if (
    input.siteId !== null &&
    !(await scoped.site.findFirst({ where: { id: input.siteId }, select: { id: true } }))
  )
    throw new TRPCError({
      code: "NOT_FOUND",
      message: `siteId: no site ${input.siteId} in this organization`,
    });
  await moveNodeToSite(db, organizationId, input.id, input.siteId);
  const { status: _status, ...after } = await nodeSite(scoped, input.id);
  return { before, after };
}
