import type { StatusReport } from "@edgefleet/agent-sdk/protocol";
import { type Db, INSTANCES_CHANGED_CHANNEL, Prisma } from "@edgefleet/db";
import type { EdgeNode } from "../node-directory.js";

export type WriteOutcome = "stored" | "duplicate" | "out_of_order";

/** One node's report to store; a batch holds at most one per node (the ingest's keyed order). */
export interface NodeStatus {
  node: Pick<EdgeNode, "id" | "organizationId">;
  report: StatusReport;
}

/**
 * Stores StatusReports idempotently, many nodes' in ONE statement (atomic; no interactive
 * transaction, whose BEGIN/COMMIT round trips and client-side machinery cost the gateway more CPU
 * than the writes when a rollout batch of thousands of nodes reports at once; and one statement
 * for a few hundred reports, since each statement's own cost in the client was the next limit).
 * Each node's status_seq advances only forwards (so a redelivered or older report changes
 * nothing), and each instance row is written only when its own status_seq is older, and only when
 * its node's advanced. Apps the node is not meant to run are ignored (a removed app's last
 * "stopped" report, for example). Outcomes come back in the order of `statuses`, whose nodes must
 * be distinct.
 */
export async function writeStatusReports(db: Db, statuses: readonly NodeStatus[]): Promise<WriteOutcome[]> {
  if (statuses.length === 0) return [];
  if (new Set(statuses.map((s) => s.node.id)).size !== statuses.length)
    throw new Error("writeStatusReports takes one report per node");
  // Instance rows point at their report by its position (1-based, as WITH ORDINALITY counts).
  const instances = statuses.flatMap(({ report }, index) =>
    report.inst.map((instance) => ({ n: index + 1, instance })),
  );
  const column = <T>(pick: (instance: StatusReport["inst"][number]) => T) =>
    instances.map(({ instance }) => pick(instance));
  // Every CTE sees the statement's one snapshot: `previous` is the seq before `advanced` moved it.
  const rows = await db.$queryRaw<Array<{ n: number; advanced: boolean; previous: bigint | null }>>(
    Prisma.sql`
    WITH input AS (
      SELECT * FROM unnest(
          ${statuses.map((s) => s.node.id)}::uuid[],
          ${statuses.map((s) => s.node.organizationId)}::uuid[],
          ${statuses.map((s) => s.report.seq)}::bigint[]
        ) WITH ORDINALITY AS r(node_id, organization_id, seq, n)
    ), previous AS (
      SELECT n.id, n.status_seq FROM node n JOIN input p ON n.id = p.node_id
    ), advanced AS (
      UPDATE node SET status_seq = p.seq FROM input p
      WHERE node.id = p.node_id AND node.status_seq < p.seq
      RETURNING node.id
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
        status_seq = p.seq,
        updated_at = now()
      FROM unnest(
          ${instances.map((i) => i.n)}::bigint[],
          ${column((instance) => instance.app)}::text[],
          ${column((instance) => instance.st)}::text[],
          ${column((instance) => instance.why ?? null)}::text[],
          ${column((instance) => instance.rs)}::int[],
          ${column((instance) => instance.ver ?? null)}::text[],
          ${column((instance) => instance.tgt ?? null)}::text[],
          ${column((instance) => instance.pb ?? null)}::bigint[],
          ${column((instance) => instance.pt ?? null)}::bigint[]
        ) AS r(n, app, state, reason, restarts, version, target, pulled, total)
        JOIN input p ON p.n = r.n
        JOIN advanced ad ON ad.id = p.node_id
        JOIN app a ON a.organization_id = p.organization_id AND a.name = r.app
        LEFT JOIN app_version v ON v.app_id = a.id AND v.version = r.version
        LEFT JOIN app_version t ON t.app_id = a.id AND t.version = r.target
      WHERE i.node_id = p.node_id AND i.app_id = a.id AND i.status_seq < p.seq
      RETURNING i.organization_id, (i.state_changed_at = now()::timestamptz(3)) AS moved
    ), notified AS (
      -- Rollout controllers wake on their organization's instance changes (not on progress bytes).
      SELECT pg_notify(${INSTANCES_CHANGED_CHANNEL}, o.organization_id::text)
      FROM (SELECT DISTINCT organization_id FROM updated WHERE moved) o
    )
    SELECT p.n::int AS n, (ad.id IS NOT NULL) AS advanced, pr.status_seq AS previous,
      (SELECT count(*)::int FROM notified) AS notified
    FROM input p
      LEFT JOIN advanced ad ON ad.id = p.node_id
      LEFT JOIN previous pr ON pr.id = p.node_id
    ORDER BY p.n`,
  );
  return statuses.map(({ report }, index) => {
    const row = rows[index];
    if (row?.advanced) return "stored";
    return row?.previous === BigInt(report.seq) ? "duplicate" : "out_of_order";
  });
}

/** One node's DesiredAck to store (one per node in a batch). */
export interface NodeAck {
  node: Pick<EdgeNode, "id">;
  revision: number;
}

/**
 * DesiredAcks, many nodes' in one statement: applied_revision only moves forwards, and never
 * past what was desired. Outcomes in the order of `acks`, whose nodes must be distinct.
 */
export async function writeDesiredAcks(
  db: Db,
  acks: readonly NodeAck[],
): Promise<Array<"stored" | "revision_ahead">> {
  if (acks.length === 0) return [];
  const rows = await db.$queryRaw<Array<{ id: string }>>(Prisma.sql`
    UPDATE node n SET applied_revision = GREATEST(n.applied_revision, r.revision), updated_at = now()
    FROM unnest(${acks.map((a) => a.node.id)}::uuid[], ${acks.map((a) => a.revision)}::int[]) AS r(id, revision)
    WHERE n.id = r.id AND r.revision <= n.desired_revision
    RETURNING n.id::text AS id`);
  const stored = new Set(rows.map((row) => row.id));
  return acks.map((ack) => (stored.has(ack.node.id) ? "stored" : "revision_ahead"));
}
