/**
 * API keys: org-scoped, role-limited credentials for scripts and the REST API. The key is shown
 * once; only its SHA-256 is stored (a database leak does not hand out access), plus a short
 * prefix so people can tell keys apart. The `efk_` prefix makes a leaked key recognizable.
 */
import { API_KEY_PREFIX, type Db, hashApiKey, mintApiKey, type Role, type tenantDb } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { apiKeyIdInput, createApiKeyInput, revokeApiKeyInput } from "../schemas/api-keys";
import { type Actor, roleAtLeast, roleSchema } from "./roles";

// Input schemas live in ../schemas (zod only) so the console can validate with them too.
export { apiKeyIdInput, createApiKeyInput, revokeApiKeyInput };

type TenantDb = ReturnType<typeof tenantDb>;

export { API_KEY_PREFIX, hashApiKey };
/** lastUsedAt is a hint, not a log: write it at most this often per key. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export interface AuthenticatedApiKey {
  id: string;
  role: Role;
  organization: { id: string; slug: string; name: string };
}

/** The key's identity if it is known, not revoked and not expired; null otherwise. */
export async function authenticateApiKey(
  db: Db,
  key: string,
  now = new Date(),
): Promise<AuthenticatedApiKey | null> {
  if (!key.startsWith(API_KEY_PREFIX) || key.length > 200) return null;
  const row = await db.apiKey.findUnique({
    where: { hash: hashApiKey(key) },
    select: {
      id: true,
      role: true,
      revokedAt: true,
      expiresAt: true,
      lastUsedAt: true,
      organization: { select: { id: true, slug: true, name: true } },
    },
  });
  if (!row || row.revokedAt || (row.expiresAt && row.expiresAt <= now)) return null;
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    // Conditional, so concurrent requests of one key write once per interval at most.
    await db.apiKey.updateMany({
      where: {
        id: row.id,
        OR: [
          { lastUsedAt: null },
          { lastUsedAt: { lte: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } },
        ],
      },
      data: { lastUsedAt: now },
    });
  }
  return { id: row.id, role: row.role, organization: row.organization };
}

export const apiKeySummary = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  role: roleSchema,
  createdBy: z.string().nullable(),
  createdAt: z.date(),
  lastUsedAt: z.date().nullable(),
  expiresAt: z.date().nullable(),
  revokedAt: z.date().nullable(),
});
export type ApiKeySummary = z.infer<typeof apiKeySummary>;

const summarySelect = {
  id: true,
  name: true,
  prefix: true,
  role: true,
  createdBy: true,
  createdAt: true,
  lastUsedAt: true,
  expiresAt: true,
  revokedAt: true,
} as const;

export const listApiKeysOutput = z.object({ items: z.array(apiKeySummary) });

/** Every key of the organization, newest first, revoked ones included (they explain audit rows). */
export async function listApiKeys(db: TenantDb): Promise<z.infer<typeof listApiKeysOutput>> {
  const items = await db.apiKey.findMany({ select: summarySelect, orderBy: { createdAt: "desc" } });
  return { items };
}

/** One key, revoked or not (read-by-id for REST clients such as the Terraform provider). */
export async function getApiKey(db: TenantDb, id: string): Promise<ApiKeySummary> {
  const row = await db.apiKey.findFirst({ where: { id }, select: summarySelect });
  if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `API key ${id} not found` });
  return row;
}

export const createdApiKey = apiKeySummary.extend({
  /** The key itself. Shown only in this response; store it now. */
  key: z.string(),
});

export async function createApiKey(
  db: TenantDb,
  organizationId: string,
  creator: Actor,
  input: z.output<typeof createApiKeyInput>,
  now = new Date(),
): Promise<z.infer<typeof createdApiKey>> {
  if (!roleAtLeast(creator.role, input.role)) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: `a key cannot have more rights than its creator: you are ${creator.role}, asked for ${input.role}`,
    });
  }
  if (input.expiresAt && input.expiresAt <= now) {
    throw new TRPCError({ code: "BAD_REQUEST", message: "expiresAt must be in the future" });
  }
  const { key, prefix, hash } = mintApiKey();
  const existing = await db.apiKey.findFirst({ where: { name: input.name }, select: { id: true } });
  if (existing)
    throw new TRPCError({ code: "CONFLICT", message: `an API key named "${input.name}" exists already` });
  const row = await db.apiKey.create({
    data: {
      organizationId,
      name: input.name,
      role: input.role,
      expiresAt: input.expiresAt ?? null,
      prefix,
      hash,
      createdBy: `${creator.type}:${creator.id}`,
    },
    select: summarySelect,
  });
  return { ...row, key };
}

/** Revokes a key (idempotent); NOT_FOUND for a key of another organization. */
export async function revokeApiKey(db: TenantDb, id: string, now = new Date()) {
  const before = await db.apiKey.findFirst({ where: { id }, select: summarySelect });
  if (!before) throw new TRPCError({ code: "NOT_FOUND", message: `API key ${id} not found` });
  if (before.revokedAt) return { before, after: before };
  const after = await db.apiKey.update({ where: { id }, data: { revokedAt: now }, select: summarySelect });
  return { before, after };
}
