import type { Db } from "./client";
import { tenantDb } from "./tenant";

/**
 * Channel on which a change to an organization's NATS account (a revocation) is announced.
 * The gateway, which alone holds the NATS signing keys, listens and re-issues the account JWT,
 * so the console and the API never need NATS secrets.
 */
export const ACCOUNT_CHANGED_CHANNEL = "edgefleet_account_changed";

/** Approves a pending node: its agent's next enrollment attempt receives credentials. */
export async function approveNode(db: Db, organizationId: string, nodeId: string): Promise<boolean> {
  const { count } = await tenantDb(db, organizationId).node.updateMany({
    where: { id: nodeId, status: "pending" },
    data: { status: "offline" },
  });
  return count === 1;
}

/**
 * Revokes a node: it can no longer connect or enroll with its key, and the gateway cuts its
 * live connection off as soon as it hears the notification. Idempotent.
 */
export async function revokeNode(db: Db, organizationId: string, nodeId: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const { count } = await tx.node.updateMany({
      where: { id: nodeId, organizationId, status: { not: "revoked" } },
      data: { status: "revoked", revokedAt: new Date() },
    });
    if (count === 1) await tx.$executeRaw`SELECT pg_notify(${ACCOUNT_CHANGED_CHANNEL}, ${organizationId})`;
    return count === 1;
  });
}
