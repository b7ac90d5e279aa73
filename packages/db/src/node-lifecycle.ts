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
