import { z } from "zod";

const labelKey = z
  .string()
  .regex(/^[A-Za-z0-9]([A-Za-z0-9._/-]{0,61}[A-Za-z0-9])?$/, "label keys: 1-63 letters, digits, . _ / -");
const labelValue = z.string().max(63);
/** Labels a token gives the nodes it enrolls. */
export const tokenLabelsSchema = z
  .record(labelKey, labelValue)
  .refine((l) => Object.keys(l).length <= 32, "at most 32 labels");

export const listTokensInput = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** Opaque: `nextCursor` of the previous page (token ids are time-ordered). */
  cursor: z.uuid().optional(),
});

export const MAX_TOKEN_LIFETIME_HOURS = 24 * 365;

export const createTokenInput = z.object({
  description: z.string().trim().max(200).optional(),
  expiresInHours: z.number().int().min(1).max(MAX_TOKEN_LIFETIME_HOURS).default(24),
  /** Omit for unlimited uses until expiry. */
  maxUses: z.number().int().min(1).max(1_000_000).optional(),
  labels: tokenLabelsSchema.default({}),
  requiresApproval: z.boolean().default(false),
  /** Site of this organization the enrolled nodes are placed at; also labels them `site=<name>`. */
  siteId: z.uuid().optional(),
});

export const tokenIdInput = z.object({ id: z.uuid() });

export const nodeIdInput = z.object({ nodeId: z.uuid() });
