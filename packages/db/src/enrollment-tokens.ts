import { createHash, randomBytes } from "node:crypto";
import type { Db } from "./client";
import { tenantDb } from "./tenant";

// Enrollment tokens are secrets shown once: only their SHA-256 is stored, so a database leak
// does not let anyone enroll nodes. The prefix makes a leaked token recognizable (secret scanners).

export const ENROLLMENT_TOKEN_PREFIX = "efe_";

export function hashEnrollmentToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

export interface NewEnrollmentToken {
  expiresAt: Date;
  /** null: unlimited until expiry. */
  maxUses: number | null;
  labels?: Record<string, string>;
  requiresApproval?: boolean;
  /** Site of this organization every node enrolled with the token is placed at. */
  siteId?: string | null;
  description?: string;
  createdBy?: string;
}

/** Creates a token in the tenant's organization; returns the secret, which is never stored. */
export async function createEnrollmentToken(db: Db, organizationId: string, input: NewEnrollmentToken) {
  const token = `${ENROLLMENT_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  const row = await tenantDb(db, organizationId).enrollmentToken.create({
    data: {
      organizationId,
      tokenHash: hashEnrollmentToken(token),
      expiresAt: input.expiresAt,
      maxUses: input.maxUses,
      labels: input.labels ?? {},
      requiresApproval: input.requiresApproval ?? false,
      siteId: input.siteId ?? null,
      description: input.description ?? null,
      createdBy: input.createdBy ?? null,
    },
  });
  return { id: row.id, token, expiresAt: row.expiresAt };
}
