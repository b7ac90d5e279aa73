import type { Db } from "./client";
import { ACCOUNT_CHANGED_CHANNEL } from "./node-lifecycle";

/**
 * Site leaf credentials (issue 8, #2): each leaf bundle mints a key that expires; a new bundle for
 * the site, or the site's deletion, revokes the earlier ones. Revocations reach the hub through
 * the organization's account JWT, which the gateway re-issues on ACCOUNT_CHANGED_CHANNEL.
 */

/** How long a site's leaf credentials are valid unless the gateway is told otherwise. */
export const SITE_CREDENTIALS_DEFAULT_DAYS = 90;

/**
 * Records a newly minted site credential and revokes the site's earlier ones, in one transaction;
 * announces the account change at commit. Returns how many earlier credentials were revoked.
 */
export async function recordSiteCredential(
  db: Db,
  credential: { organizationId: string; siteId: string; publicKey: string; expiresAt: Date },
): Promise<number> {
  return db.$transaction(async (tx) => {
    const revoked = await revokeSiteCredentials(tx, credential.organizationId, credential.siteId);
    await tx.siteLeafCredential.create({ data: credential });
    return revoked;
  });
}

/**
 * Revokes a site's live credentials (bundle re-issued, or the site deleted) and announces the
 * account change at commit. Run it inside the caller's transaction. Idempotent.
 */
export async function revokeSiteCredentials(
  db: Pick<Db, "$executeRaw">,
  organizationId: string,
  siteId: string,
): Promise<number> {
  const revoked = await db.$executeRaw`
    UPDATE site_leaf_credential SET revoked_at = now()
    WHERE organization_id = ${organizationId}::uuid AND site_id = ${siteId}::uuid
      AND revoked_at IS NULL AND expires_at > now()`;
  if (revoked > 0) await db.$executeRaw`SELECT pg_notify(${ACCOUNT_CHANGED_CHANNEL}, ${organizationId})`;
  return revoked;
}

/** Public keys of the organization's revoked site credentials that have not expired yet. */
export async function revokedSiteCredentialKeys(db: Db, organizationId: string): Promise<string[]> {
  const rows = await db.siteLeafCredential.findMany({
    where: { organizationId, revokedAt: { not: null }, expiresAt: { gt: new Date() } },
    select: { publicKey: true },
  });
  return rows.map((row) => row.publicKey);
}
