import { z } from "zod";
import { boundedDate } from "./dates";

export const AUDIT_PAGE_MAX = 500;

export const listAuditInput = z.object({
  limit: z.coerce.number().int().min(1).max(AUDIT_PAGE_MAX).default(50),
  /** Opaque: `nextCursor` of the previous page. */
  cursor: z.string().min(1).max(200).optional(),
  actorType: z.enum(["user", "apiKey", "system"]).optional(),
  actorId: z.string().min(1).max(100).optional(),
  /** Exact action, e.g. "apiKey.revoke", or a prefix ending in "." such as "member.". */
  action: z.string().min(1).max(100).optional(),
  targetType: z.string().min(1).max(100).optional(),
  targetId: z.string().min(1).max(100).optional(),
  from: boundedDate.optional(),
  to: boundedDate.optional(),
});
export type ListAuditInput = z.output<typeof listAuditInput>;
