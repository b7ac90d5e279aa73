import type { Db } from "./client";
import { Prisma } from "./generated/prisma/client";

/**
 * Channel on which "this organization's fleet changed" is announced: payload = organization id.
 * Sent once per organization per statement that changed node statuses (never once per node);
 * Postgres also folds identical notifications of one transaction into one. The console's live
 * pages listen and refetch their aggregates.
 */
export const FLEET_CHANGED_CHANNEL = "edgefleet_fleet_changed";

/** Why a node's status changed; stored in node_status_event.reason. */
export const STATUS_REASONS = [
  "hello",
  "heartbeat",
  "heartbeat_timeout",
  "disconnected",
  "enrolled",
  "approved",
  "revoked",
] as const;
export type StatusReason = (typeof STATUS_REASONS)[number];

/** How long status history is kept (the offline sweeper prunes older rows). */
export const STATUS_EVENT_RETENTION_DAYS = 30;

export interface StatusTransitionResult {
  /** Node rows the statement updated (changed status or not). */
  updated: number;
  /** Their ids, only when asked for (`returnIds`): a large batch need not ship them back. */
  updatedIds: string[];
  /** History rows written: nodes whose status actually changed. */
  recorded: number;
}

/**
 * ONE statement that updates a set of nodes, records every status change it makes in
 * node_status_event, and notifies FLEET_CHANGED_CHANNEL once per organization concerned.
 *
 * - `where`: condition on `node` choosing the rows to update (unqualified node columns).
 * - `set`: the assignments of `UPDATE node SET …` (unqualified node columns).
 * - `perNode` (optional): a relation aliased `per_node` with a `node_id` column, one row per node,
 *   joined to the rows updated; `set` may use its columns (per-node values in one statement, e.g.
 *   a batch of Hellos each with its own agent version and revision).
 *
 * The candidate rows are locked in id order (FOR UPDATE) so their previous status is read under
 * the lock, and concurrent batches lock in one order. A row whose status does not change (a
 * heartbeat refreshing last_seen_at) is updated but writes no history, so a redelivered or
 * repeated batch records nothing twice. Cost: one INSERT … SELECT per statement, whatever the size.
 */
export async function updateNodesWithStatusEvents(
  db: Pick<Db, "$queryRaw">,
  statement: {
    where: Prisma.Sql;
    set: Prisma.Sql;
    reason: StatusReason;
    returnIds?: boolean;
    perNode?: Prisma.Sql;
  },
): Promise<StatusTransitionResult> {
  const ids = statement.returnIds
    ? Prisma.sql`(SELECT array_agg(id::text) FROM changed)`
    : Prisma.sql`NULL::text[]`;
  const [row] = await db.$queryRaw<
    Array<{ updated: number; ids: string[] | null; recorded: number }>
  >(Prisma.sql`
    WITH candidate AS (
      SELECT id AS candidate_id, status AS previous_status FROM node
      WHERE ${statement.where}
      ORDER BY id
      FOR UPDATE
    ), changed AS (
      UPDATE node SET ${statement.set}
      FROM candidate ${statement.perNode ? Prisma.sql`JOIN ${statement.perNode} ON per_node.node_id = candidate.candidate_id` : Prisma.empty}
      WHERE node.id = candidate.candidate_id
      RETURNING node.id, node.organization_id, candidate.previous_status, node.status AS new_status
    ), recorded AS (
      INSERT INTO node_status_event (organization_id, node_id, from_status, to_status, reason)
      SELECT organization_id, id, previous_status, new_status, ${statement.reason}
      FROM changed WHERE previous_status IS DISTINCT FROM new_status
      ORDER BY id
      RETURNING organization_id
    ), notified AS (
      SELECT pg_notify(${FLEET_CHANGED_CHANNEL}, organization_id::text)
      FROM (SELECT DISTINCT organization_id FROM recorded) AS organizations
    )
    SELECT (SELECT count(*)::int FROM changed) AS updated, ${ids} AS ids,
           (SELECT count(*)::int FROM recorded) AS recorded,
           (SELECT count(*)::int FROM notified) AS notified`);
  return { updated: row?.updated ?? 0, updatedIds: row?.ids ?? [], recorded: row?.recorded ?? 0 };
}

/** Records the first status of newly created nodes (enrollment) and notifies; one statement. */
export async function recordEnrollmentEvents(db: Pick<Db, "$queryRaw">, nodeIds: string[]): Promise<number> {
  const [row] = await db.$queryRaw<Array<{ recorded: number }>>(Prisma.sql`
    WITH recorded AS (
      INSERT INTO node_status_event (organization_id, node_id, from_status, to_status, reason)
      SELECT organization_id, id, NULL, status, 'enrolled' FROM node
      WHERE id = ANY(${nodeIds}::uuid[]) ORDER BY id
      RETURNING organization_id
    ), notified AS (
      SELECT pg_notify(${FLEET_CHANGED_CHANNEL}, organization_id::text)
      FROM (SELECT DISTINCT organization_id FROM recorded) AS organizations
    )
    SELECT (SELECT count(*)::int FROM recorded) AS recorded, (SELECT count(*)::int FROM notified) AS notified`);
  return row?.recorded ?? 0;
}

/**
 * Deletes history older than the retention, at most `limit` rows per call (oldest first, via the
 * index on `at`), so one call never holds locks for long; returns how many it deleted.
 */
export async function pruneStatusEvents(
  db: Pick<Db, "$executeRaw">,
  options: { retentionDays?: number; limit?: number } = {},
): Promise<number> {
  const days = options.retentionDays ?? STATUS_EVENT_RETENTION_DAYS;
  return db.$executeRaw(Prisma.sql`
    DELETE FROM node_status_event WHERE id IN (
      SELECT id FROM node_status_event
      WHERE at < now() - ${days} * interval '1 day'
      ORDER BY at
      LIMIT ${options.limit ?? 10_000})`);
}
