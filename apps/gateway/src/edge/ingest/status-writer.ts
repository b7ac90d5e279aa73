import type { StatusReport } from "@edgefleet/agent-sdk/protocol";
import { type Db, INSTANCES_CHANGED_CHANNEL, Prisma } from "@edgefleet/db";
import type { EdgeNode } from "../node-directory.js";

export type WriteOutcome = "stored" | "duplicate" | "out_of_order";

/**
 * Stores a StatusReport idempotently. The node's status_seq advances only forwards (so a
 * redelivered or older report changes nothing), and each instance row is written only when
 * its own status_seq is older, in the same transaction. Apps the node is not meant to run are
 * ignored (a removed app's last "stopped" report, for example).
 */
export async function writeStatusReport(db: Db, node: EdgeNode, report: StatusReport): Promise<WriteOutcome> {
  return db.$transaction(async (tx) => {
    const advanced = await tx.$queryRaw<Array<{ id: string }>>(Prisma.sql`
      UPDATE node SET status_seq = ${report.seq}::bigint
      WHERE id = ${node.id}::uuid AND status_seq < ${report.seq}::bigint
      RETURNING id`);
    if (advanced.length === 0) {
      const [current] = await tx.$queryRaw<Array<{ seq: bigint }>>(
        Prisma.sql`SELECT status_seq AS seq FROM node WHERE id = ${node.id}::uuid`,
      );
      return current && current.seq === BigInt(report.seq) ? "duplicate" : "out_of_order";
    }
    if (report.inst.length === 0) return "stored";
    // state_changed_at moves only when the state, the running or the target version changes:
    // a rollout counts a failure only when it came after the node's dispatch.
    const changed = await tx.$queryRaw<Array<{ count: bigint }>>(Prisma.sql`
      WITH updated AS (
        UPDATE app_instance i SET
          state = r.state::app_instance_state,
          reason = r.reason,
          restarts = r.restarts,
          observed_version_id = v.id,
          target_version_id = t.id,
          pulled_bytes = r.pulled,
          total_bytes = r.total,
          state_changed_at = CASE
            WHEN i.state IS DISTINCT FROM r.state::app_instance_state
              OR i.observed_version_id IS DISTINCT FROM v.id
              OR i.target_version_id IS DISTINCT FROM t.id
            THEN now() ELSE i.state_changed_at END,
          status_seq = ${report.seq}::bigint,
          updated_at = now()
        FROM unnest(
            ${report.inst.map((instance) => instance.app)}::text[],
            ${report.inst.map((instance) => instance.st)}::text[],
            ${report.inst.map((instance) => instance.why ?? null)}::text[],
            ${report.inst.map((instance) => instance.rs)}::int[],
            ${report.inst.map((instance) => instance.ver ?? null)}::text[],
            ${report.inst.map((instance) => instance.tgt ?? null)}::text[],
            ${report.inst.map((instance) => instance.pb ?? null)}::bigint[],
            ${report.inst.map((instance) => instance.pt ?? null)}::bigint[]
          ) AS r(app, state, reason, restarts, version, target, pulled, total)
          JOIN app a ON a.organization_id = ${node.organizationId}::uuid AND a.name = r.app
          LEFT JOIN app_version v ON v.app_id = a.id AND v.version = r.version
          LEFT JOIN app_version t ON t.app_id = a.id AND t.version = r.target
        WHERE i.node_id = ${node.id}::uuid AND i.app_id = a.id AND i.status_seq < ${report.seq}::bigint
        RETURNING (i.state_changed_at = now()::timestamptz(3)) AS moved
      )
      SELECT count(*) FILTER (WHERE moved) AS count FROM updated`);
    // Rollout controllers wake on their organization's instance changes (not on progress bytes).
    if ((changed[0]?.count ?? 0n) > 0n) {
      await tx.$executeRaw(
        Prisma.sql`SELECT pg_notify(${INSTANCES_CHANGED_CHANNEL}, ${node.organizationId})`,
      );
    }
    return "stored";
  });
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
