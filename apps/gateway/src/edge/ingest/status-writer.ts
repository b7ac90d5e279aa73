import type { StatusReport } from "@edgefleet/agent-sdk/protocol";
import { type Db, INSTANCES_CHANGED_CHANNEL, Prisma } from "@edgefleet/db";
import type { EdgeNode } from "../node-directory.js";

export type WriteOutcome = "stored" | "duplicate" | "out_of_order";

/**
 * Stores a StatusReport idempotently, in ONE statement (atomic; no interactive transaction, whose
 * BEGIN/COMMIT round trips and client-side machinery cost the gateway more CPU than the writes
 * when a rollout batch of thousands of nodes reports at once). The node's status_seq advances
 * only forwards (so a redelivered or older report changes nothing), and each instance row is
 * written only when its own status_seq is older, and only when the node's advanced. Apps the node
 * is not meant to run are ignored (a removed app's last "stopped" report, for example).
 */
export async function writeStatusReport(db: Db, node: EdgeNode, report: StatusReport): Promise<WriteOutcome> {
  const instances = report.inst;
  // Every CTE sees the statement's one snapshot: `previous` is the seq before `advanced` moved it.
  const [row] = await db.$queryRaw<Array<{ advanced: number; previous: bigint | null; notified: number }>>(
    Prisma.sql`
    WITH previous AS (
      SELECT status_seq FROM node WHERE id = ${node.id}::uuid
    ), advanced AS (
      UPDATE node SET status_seq = ${report.seq}::bigint
      WHERE id = ${node.id}::uuid AND status_seq < ${report.seq}::bigint
      RETURNING id
    ), updated AS (
      UPDATE app_instance i SET
        state = r.state::app_instance_state,
        reason = r.reason,
        restarts = r.restarts,
        observed_version_id = v.id,
        target_version_id = t.id,
        pulled_bytes = r.pulled,
        total_bytes = r.total,
        -- Moves only when the state, the running or the target version changes: a rollout
        -- counts a failure only when it came after the node's dispatch.
        state_changed_at = CASE
          WHEN i.state IS DISTINCT FROM r.state::app_instance_state
            OR i.observed_version_id IS DISTINCT FROM v.id
            OR i.target_version_id IS DISTINCT FROM t.id
          THEN now() ELSE i.state_changed_at END,
        status_seq = ${report.seq}::bigint,
        updated_at = now()
      FROM unnest(
          ${instances.map((instance) => instance.app)}::text[],
          ${instances.map((instance) => instance.st)}::text[],
          ${instances.map((instance) => instance.why ?? null)}::text[],
          ${instances.map((instance) => instance.rs)}::int[],
          ${instances.map((instance) => instance.ver ?? null)}::text[],
          ${instances.map((instance) => instance.tgt ?? null)}::text[],
          ${instances.map((instance) => instance.pb ?? null)}::bigint[],
          ${instances.map((instance) => instance.pt ?? null)}::bigint[]
        ) AS r(app, state, reason, restarts, version, target, pulled, total)
        JOIN app a ON a.organization_id = ${node.organizationId}::uuid AND a.name = r.app
        LEFT JOIN app_version v ON v.app_id = a.id AND v.version = r.version
        LEFT JOIN app_version t ON t.app_id = a.id AND t.version = r.target
      WHERE EXISTS (SELECT 1 FROM advanced)
        AND i.node_id = ${node.id}::uuid AND i.app_id = a.id AND i.status_seq < ${report.seq}::bigint
      RETURNING (i.state_changed_at = now()::timestamptz(3)) AS moved
    ), notified AS (
      -- Rollout controllers wake on their organization's instance changes (not on progress bytes).
      SELECT pg_notify(${INSTANCES_CHANGED_CHANNEL}, ${node.organizationId})
      WHERE EXISTS (SELECT 1 FROM updated WHERE moved)
    )
    SELECT (SELECT count(*)::int FROM advanced) AS advanced,
           (SELECT status_seq FROM previous) AS previous,
           (SELECT count(*)::int FROM notified) AS notified`,
  );
  if ((row?.advanced ?? 0) > 0) return "stored";
  return row?.previous === BigInt(report.seq) ? "duplicate" : "out_of_order";
}

/** DesiredAck: applied_revision only moves forwards, and never past what was desired. */
export async function writeDesiredAck(
  db: Db,
  node: EdgeNode,
  revision: number,
): Promise<"stored" | "revision_ahead"> {
  const rows = await db.$queryRaw<Array<{ id: string }>>(Prisma.sql`
    UPDATE node SET applied_revision = GREATEST(applied_revision, ${revision}), updated_at = now()
    WHERE id = ${node.id}::uuid AND ${revision} <= desired_revision
    RETURNING id`);
  return rows.length === 1 ? "stored" : "revision_ahead";
}
