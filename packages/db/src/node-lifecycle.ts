import type { Db } from "./client";
import { Prisma } from "./generated/prisma/client";
import { updateNodesWithStatusEvents } from "./node-status-events";

/**
 * Channel on which a change to an organization's NATS account (a revocation) is announced.
 * The gateway, which alone holds the NATS signing keys, listens and re-issues the account JWT,
 * so the console and the API never need NATS secrets.
 */
export const ACCOUNT_CHANGED_CHANNEL = "edgefleet_account_changed";

/** Approves a pending node: its agent's next enrollment attempt receives credentials. */
export async function approveNode(db: Db, organizationId: string, nodeId: string): Promise<boolean> {
  const { updated } = await updateNodesWithStatusEvents(db, {
    where: Prisma.sql`organization_id = ${organizationId}::uuid AND id = ${nodeId}::uuid AND status = 'pending'`,
    set: Prisma.sql`status = 'offline', updated_at = now()`,
    reason: "approved",
  });
  return updated === 1;
}

/**
 * Revokes a node: it can no longer connect or enroll with its key, and the gateway cuts its
 * live connection off as soon as it hears the notification. Idempotent.
 */
export async function revokeNode(db: Db, organizationId: string, nodeId: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const { updated } = await updateNodesWithStatusEvents(tx, {
      where: Prisma.sql`organization_id = ${organizationId}::uuid AND id = ${nodeId}::uuid AND status <> 'revoked'`,
      set: Prisma.sql`status = 'revoked', revoked_at = now(), updated_at = now()`,
      reason: "revoked",
    });
    const revoked = updated === 1;
    if (revoked) await tx.$executeRaw`SELECT pg_notify(${ACCOUNT_CHANGED_CHANNEL}, ${organizationId})`;
    return revoked;
  });
}

/**
 * Channel on which a node's move to another site is announced (payload: the node id). Every
 * gateway forgets what it cached about the node; the one publishing desired state sends the node
 * credentials for its new site (docs/protocol.md "Credentials").
 */
export const NODE_MOVED_CHANNEL = "edgefleet_node_moved";

/** How long a site a node was moved away from is remembered (EF_UP keeps a report at most a day). */
const FORMER_SITE_MS = 24 * 3_600_000;

/**
 * Moves a node to another site of its organization, or to none (`siteId` null). Its credentials
 * name its site in every subject (issue 8 #2), so the gateway re-issues them when it hears of the
 * move: the node must then reach the hub through its new site's leaf (or directly). The site it
 * leaves is remembered in `former_sites` (`{"<site wire id>" | "none": <unix ms>}`, the last day's):
 * reports it sent from there before the move are still its own. False when there is no such node,
 * it is revoked, or it is at that site already.
 */
export async function moveNodeToSite(
  db: Db,
  organizationId: string,
  nodeId: string,
  siteId: string | null,
): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const moved = await tx.$executeRaw`
      UPDATE node n SET site_id = ${siteId}::uuid, updated_at = now(),
        former_sites = (
          SELECT coalesce(jsonb_object_agg(key, value), '{}'::jsonb) FROM jsonb_each(n.former_sites)
          WHERE (value #>> '{}')::bigint > (extract(epoch FROM now()) * 1000)::bigint - ${FORMER_SITE_MS}
        ) || jsonb_build_object(
          coalesce((SELECT s.wire_id::text FROM site s WHERE s.id = n.site_id), 'none'),
          (extract(epoch FROM now()) * 1000)::bigint)
      WHERE n.organization_id = ${organizationId}::uuid AND n.id = ${nodeId}::uuid
        AND n.status <> 'revoked' AND n.site_id IS DISTINCT FROM ${siteId}::uuid`;
    if (moved === 1) await tx.$executeRaw`SELECT pg_notify(${NODE_MOVED_CHANNEL}, ${nodeId})`;
    return moved === 1;
  });
}
