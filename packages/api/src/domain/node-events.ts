/**
 * Node status history (table node_status_event, written by the gateway in the same statements
 * that change statuses, and by approval/revocation): one node's history, the organization's
 * recent events, and a node's availability over a time range as segments to draw.
 * Ordering and cursors are by event id (a sequence: id order = write order), newest first.
 * Retention is 30 days (STATUS_EVENT_RETENTION_DAYS, pruned by the gateway's offline sweeper).
 */
import { STATUS_EVENT_RETENTION_DAYS } from "@edgefleet/db";
import { z } from "zod";
import { nodeStatusSchema, type TenantDb } from "./nodes";

export const EVENT_PAGE_MAX = 200;

/** Thrown for a cursor that is not an event id this API returned. */
export class InvalidEventCursorError extends Error {
  override name = "InvalidEventCursorError";
}

const INT8_MAX = 9_223_372_036_854_775_807n;
const cursorSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,18}$/, { error: "cursor must be a nextCursor this API returned" })
  // 19 digits reach past bigint's range (issue 8, #6): still not one we returned.
  .refine((cursor) => BigInt(cursor) <= INT8_MAX, { error: "cursor must be a nextCursor this API returned" });

export const statusEventSchema = z.object({
  id: z.string(),
  nodeId: z.string(),
  nodeName: z.string(),
  /** null for the node's first status (its enrollment). */
  from: nodeStatusSchema.nullable(),
  to: nodeStatusSchema,
  /** hello, heartbeat (came online), heartbeat_timeout and disconnected (went offline), enrolled, approved, revoked. */
  reason: z.string(),
  at: z.date(),
});
export type StatusEvent = z.infer<typeof statusEventSchema>;

export const statusEventPage = z.object({
  items: z.array(statusEventSchema),
  nextCursor: z.string().nullable(),
});
export type StatusEventPage = z.infer<typeof statusEventPage>;

export const nodeHistoryInput = z.object({
  nodeId: z.uuid({ error: "node id must be a UUID" }),
  limit: z.coerce.number().int().min(1).max(EVENT_PAGE_MAX).default(50),
  cursor: cursorSchema.optional(),
});

export const fleetEventsInput = z.object({
  limit: z.coerce.number().int().min(1).max(EVENT_PAGE_MAX).default(20),
  cursor: cursorSchema.optional(),
});

const eventSelect = {
  id: true,
  nodeId: true,
  fromStatus: true,
  toStatus: true,
  reason: true,
  at: true,
  node: { select: { name: true } },
} as const;

async function eventPage(
  db: TenantDb,
  where: { nodeId?: string },
  input: { limit: number; cursor?: string | undefined },
): Promise<StatusEventPage> {
  const rows = await db.nodeStatusEvent.findMany({
    where: { ...where, ...(input.cursor ? { id: { lt: BigInt(input.cursor) } } : {}) },
    orderBy: { id: "desc" },
    take: input.limit + 1,
    select: eventSelect,
  });
  // One extra row tells whether another page exists without a count query.
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    items: page.map((row) => ({
      id: row.id.toString(),
      nodeId: row.nodeId,
      nodeName: row.node.name,
      from: row.fromStatus,
      to: row.toStatus,
      reason: row.reason,
      at: row.at,
    })),
    nextCursor: rows.length > input.limit && last ? last.id.toString() : null,
  };
}

/** One node's status changes, newest first; null when the node is not in this organization. */
export async function nodeStatusHistory(
  db: TenantDb,
  input: z.output<typeof nodeHistoryInput>,
): Promise<StatusEventPage | null> {
  const node = await db.node.findFirst({ where: { id: input.nodeId }, select: { id: true } });
  if (!node) return null;
  return eventPage(db, { nodeId: input.nodeId }, input);
}

/** The organization's most recent status changes across all nodes, newest first. */
export function fleetStatusEvents(
  db: TenantDb,
  input: z.output<typeof fleetEventsInput>,
): Promise<StatusEventPage> {
  return eventPage(db, {}, input);
}

const latest = (a: Date, b: Date) => new Date(Math.max(a.getTime(), b.getTime()));
const earliest = (a: Date, b: Date) => new Date(Math.min(a.getTime(), b.getTime()));

export const AVAILABILITY_MAX_RANGE_MS = STATUS_EVENT_RETENTION_DAYS * 24 * 3600_000;
/** A node flapping all day still draws; past this many changes in the range, the oldest are merged. */
const AVAILABILITY_MAX_EVENTS = 2_000;

export const nodeAvailabilityInput = z
  .object({
    nodeId: z.uuid({ error: "node id must be a UUID" }),
    range: z.object({ from: z.date(), to: z.date() }),
  })
  .refine((input) => input.range.to > input.range.from, {
    message: "range.to must be after range.from",
    path: ["range"],
  })
  .refine((input) => input.range.to.getTime() - input.range.from.getTime() <= AVAILABILITY_MAX_RANGE_MS, {
    message: `range must be at most ${STATUS_EVENT_RETENTION_DAYS} days (the history's retention)`,
    path: ["range"],
  });

export const availabilityOutput = z.object({
  /** Consecutive, non-overlapping; `status` null where the node did not exist yet or history is gone. */
  segments: z.array(z.object({ status: nodeStatusSchema.nullable(), from: z.date(), to: z.date() })),
  /** Share of the known time (segments with a status) the node was online, 0..1; null if none is known. */
  onlineRatio: z.number().min(0).max(1).nullable(),
});
export type Availability = z.infer<typeof availabilityOutput>;

/**
 * The node's status over [from, to] as segments: the status before the range comes from the last
 * change before it (or the first change's `from`), the node's current status when nothing changed.
 * null when the node is not in this organization.
 */
export async function nodeAvailability(
  db: TenantDb,
  input: z.output<typeof nodeAvailabilityInput>,
): Promise<Availability | null> {
  const node = await db.node.findFirst({
    where: { id: input.nodeId },
    select: { status: true, enrolledAt: true },
  });
  if (!node) return null;
  const { from, to } = input.range;
  const [before, changes] = await Promise.all([
    db.nodeStatusEvent.findFirst({
      where: { nodeId: input.nodeId, at: { lt: from } },
      orderBy: { id: "desc" },
      select: { toStatus: true },
    }),
    db.nodeStatusEvent.findMany({
      where: { nodeId: input.nodeId, at: { gte: from, lte: to } },
      orderBy: { id: "desc" },
      take: AVAILABILITY_MAX_EVENTS,
      select: { fromStatus: true, toStatus: true, at: true },
    }),
  ]);
  changes.reverse();
  const start = latest(node.enrolledAt, from);
  const segments: Availability["segments"] = [];
  if (start > from) segments.push({ status: null, from, to: earliest(start, to) });
  if (start < to) {
    // With the oldest changes cut off (a flapping node), the first kept change says what came before it.
    const truncated = changes.length === AVAILABILITY_MAX_EVENTS;
    let status = truncated
      ? (changes[0]?.fromStatus ?? null)
      : (before?.toStatus ?? changes[0]?.fromStatus ?? (changes.length === 0 ? node.status : null));
    let since = start;
    for (const change of changes) {
      const at = latest(change.at, since);
      if (at > since) segments.push({ status, from: since, to: at });
      status = change.toStatus;
      since = at;
    }
    if (to > since) segments.push({ status, from: since, to });
  }
  let known = 0;
  let online = 0;
  for (const segment of segments) {
    if (!segment.status) continue;
    const length = segment.to.getTime() - segment.from.getTime();
    known += length;
    if (segment.status === "online") online += length;
  }
  return { segments, onlineRatio: known > 0 ? online / known : null };
}
