/**
 * Audit log: one append-only row per successful mutation, written by the organization middleware
 * (src/trpc.ts), never by handlers. Handlers only describe the change (target, before, after)
 * through `ctx.audit.record(...)`; without that the middleware records the returned object.
 */
import type { Db, Prisma, tenantDb } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { AUDIT_PAGE_MAX, type ListAuditInput, listAuditInput } from "../schemas/audit";
import type { Actor } from "./roles";

export type { ListAuditInput };
// Input schemas live in ../schemas (zod only) so the console can validate with them too.
export { AUDIT_PAGE_MAX, listAuditInput };

type TenantDb = ReturnType<typeof tenantDb>;

export interface AuditChange {
  targetId: string | null;
  before: unknown;
  after: unknown;
}

export interface AuditRecorder {
  /** Describes what the current mutation changed. Call once, after the change succeeded. */
  record(change: AuditChange): void;
  change(): AuditChange | null;
}

export function createAuditRecorder(): AuditRecorder {
  let recorded: AuditChange | null = null;
  return {
    record(change) {
      recorded = change;
    },
    change: () => recorded,
  };
}

/** What JSONB can hold: dates become ISO strings, bigints strings; nothing (undefined) stays SQL NULL. */
function toJson(value: unknown): Prisma.InputJsonValue | undefined {
  if (value === null || value === undefined) return undefined;
  return JSON.parse(JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? v.toString() : v)));
}

export async function writeAuditRow(
  db: Db,
  row: { organizationId: string; actor: Actor; action: string; targetType: string; change: AuditChange },
): Promise<void> {
  await db.auditLog.create({
    data: {
      organizationId: row.organizationId,
      actorType: row.actor.type,
      actorId: row.actor.id,
      action: row.action,
      targetType: row.targetType,
      targetId: row.change.targetId,
      before: toJson(row.change.before),
      after: toJson(row.change.after),
    },
  });
}

export const auditEntry = z.object({
  id: z.string(),
  actorType: z.enum(["user", "apiKey", "system"]),
  actorId: z.string().nullable(),
  /**
   * Who that is, resolved when the page is read: a member's e-mail or an API key's name; null for
   * the system, a person no longer a member, or a deleted key.
   */
  actorName: z.string().nullable(),
  action: z.string(),
  targetType: z.string(),
  targetId: z.string().nullable(),
  before: z.unknown(),
  after: z.unknown(),
  createdAt: z.date(),
});
export type AuditEntry = z.infer<typeof auditEntry>;

export const listAuditOutput = z.object({ items: z.array(auditEntry), nextCursor: z.string().nullable() });

const uuid = z.uuid();
const isUuid = (value: string) => uuid.safeParse(value).success;

/** Cursor = time and id of the last entry, so the next page is a range scan of (organization, createdAt, id). */
function encodeCursor(row: { createdAt: Date; id: string }): string {
  return Buffer.from(`${row.createdAt.toISOString()}|${row.id}`, "utf8").toString("base64url");
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [time, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const createdAt = new Date(time ?? "");
  if (!id || !isUuid(id) || Number.isNaN(createdAt.getTime())) {
    throw new TRPCError({ code: "BAD_REQUEST", message: "cursor is not one this API returned" });
  }
  return { createdAt, id };
}

/** Newest first. */
export async function listAudit(
  db: TenantDb,
  input: ListAuditInput,
): Promise<z.infer<typeof listAuditOutput>> {
  if (input.from && input.to && input.from > input.to) {
    throw new TRPCError({ code: "BAD_REQUEST", message: "`from` must not be after `to`" });
  }
  const after = input.cursor ? decodeCursor(input.cursor) : null;
  const action = input.action?.endsWith(".") ? { startsWith: input.action } : input.action;
  const rows = await db.auditLog.findMany({
    where: {
      ...(after
        ? {
            OR: [
              { createdAt: { lt: after.createdAt } },
              { createdAt: after.createdAt, id: { lt: after.id } },
            ],
          }
        : {}),
      ...(input.actorType ? { actorType: input.actorType } : {}),
      ...(input.actorId ? { actorId: input.actorId } : {}),
      ...(action ? { action } : {}),
      ...(input.targetType ? { targetType: input.targetType } : {}),
      ...(input.targetId ? { targetId: input.targetId } : {}),
      ...(input.from || input.to
        ? {
            createdAt: { ...(input.from ? { gte: input.from } : {}), ...(input.to ? { lte: input.to } : {}) },
          }
        : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  const names = await actorNames(db, page);
  return {
    items: page.map((row) => ({
      id: row.id,
      actorType: row.actorType,
      actorId: row.actorId,
      actorName: (row.actorId && names.get(`${row.actorType}:${row.actorId}`)) ?? null,
      action: row.action,
      targetType: row.targetType,
      targetId: row.targetId,
      before: row.before,
      after: row.after,
      createdAt: row.createdAt,
    })),
    nextCursor: rows.length > input.limit && last ? encodeCursor(last) : null,
  };
}

/**
 * Names of a page's actors, keyed "type:id": two queries per page, on the tenant client, so only
 * this organization's members and keys are named (a former member stays a bare id).
 */
async function actorNames(
  db: TenantDb,
  rows: readonly { actorType: string; actorId: string | null }[],
): Promise<Map<string, string>> {
  const idsOf = (type: string) => [
    ...new Set(
      rows.filter((row) => row.actorType === type && row.actorId).map((row) => row.actorId as string),
    ),
  ];
  const userIds = idsOf("user").filter(isUuid);
  const keyIds = idsOf("apiKey").filter(isUuid);
  const [users, keys] = await Promise.all([
    userIds.length
      ? db.user.findMany({ where: { id: { in: userIds } }, select: { id: true, email: true } })
      : [],
    keyIds.length
      ? db.apiKey.findMany({ where: { id: { in: keyIds } }, select: { id: true, name: true } })
      : [],
  ]);
  return new Map([
    ...users.map((user) => [`user:${user.id}`, user.email] as const),
    ...keys.map((key) => [`apiKey:${key.id}`, key.name] as const),
  ]);
}
