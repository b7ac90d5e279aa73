import type { Db } from "./client";
import { type DesiredAppSpec, type DesiredDelta, DesiredStateError, UUID } from "./desired-state";
import { Prisma } from "./generated/prisma/client";

/**
 * `desiredDeltaSince` for many nodes at once: the gateway's publisher, after a rollout batch
 * committed 10,000 nodes, reads their deltas in three statements instead of ~five round trips per
 * node (which took ~55 s for 10,000 nodes). Same semantics, node by node (the test compares them):
 * null when the node is at `fromRevision`; everything (a delta from 0) for a revision it never
 * issued; one snapshot (REPEATABLE READ), so each delta's `to` and rows agree.
 */

export interface DeltaRequest {
  nodeId: string;
  /** null: from the revision the node last acknowledged (`applied_revision`), as the publisher sends. */
  fromRevision: number | null;
}

export interface NodeDelta {
  nodeId: string;
  organizationWireId: bigint;
  nodeWireId: bigint;
  /** Site token of the subjects the node listens on (`node.subject_site`); null: subject layout 1. */
  subjectSite: string | null;
  status: string;
  appliedRevision: number;
  /** null when the node is at the requested revision already. */
  delta: DesiredDelta | null;
}

/** One answer per request whose node exists, in request order; unknown ids are left out. */
export async function desiredDeltasSince(db: Db, requests: readonly DeltaRequest[]): Promise<NodeDelta[]> {
  for (const request of requests) {
    if (!UUID.test(request.nodeId)) {
      throw new DesiredStateError(`node id must be a UUID, got ${JSON.stringify(request.nodeId)}`);
    }
    if (request.fromRevision !== null && !Number.isSafeInteger(request.fromRevision)) {
      throw new DesiredStateError(`revision must be an integer, got ${request.fromRevision}`);
    }
  }
  if (requests.length === 0) return [];
  const ids = requests.map((request) => request.nodeId);
  const requested = requests.map((request) => request.fromRevision);
  return db.$transaction(
    async (tx) => {
      const nodes = await tx.$queryRaw<
        Array<{
          idx: bigint;
          id: string;
          org: bigint;
          wid: bigint;
          subject_site: string | null;
          status: string;
          applied: number;
          to: number;
          from: number;
        }>
      >(Prisma.sql`
        SELECT r.idx, n.id::text, o.wire_id AS org, n.wire_id AS wid, n.subject_site, n.status::text AS status,
               n.applied_revision AS applied, n.desired_revision AS to,
               coalesce(r.from_revision, n.applied_revision) AS from
        FROM unnest(${ids}::uuid[], ${requested}::int[]) WITH ORDINALITY AS r(node_id, from_revision, idx)
        JOIN node n ON n.id = r.node_id
        JOIN organization o ON o.id = n.organization_id
        ORDER BY r.idx`);
      // Where each delta starts: a revision beyond the node's (or negative) means "everything".
      // Keyed by request (a node may be asked for from several revisions).
      const starts = nodes
        .filter((node) => node.from !== node.to)
        .map((node) => ({
          key: Number(node.idx),
          id: node.id,
          start: node.from > node.to || node.from < 0 ? 0 : node.from,
        }));
      const startKeys = starts.map((s) => s.key);
      const startIds = starts.map((s) => s.id);
      const startRevisions = starts.map((s) => s.start);
      const [instances, removals] =
        starts.length === 0
          ? [[], []]
          : await Promise.all([
              tx.$queryRaw<
                Array<{
                  key: number;
                  app: string;
                  version: string;
                  artifact_url: string | null;
                  artifact_sha256: string | null;
                  run_spec: Prisma.JsonValue;
                }>
              >(Prisma.sql`
                SELECT s.key, a.name AS app, v.version, v.artifact_url, v.artifact_sha256, v.run_spec
                FROM unnest(${startKeys}::int[], ${startIds}::uuid[], ${startRevisions}::int[]) AS s(key, node_id, start)
                JOIN app_instance i ON i.node_id = s.node_id AND i.desired_revision > s.start
                JOIN app a ON a.id = i.app_id
                JOIN app_version v ON v.id = i.desired_version_id`),
              tx.$queryRaw<Array<{ key: number; app_name: string }>>(Prisma.sql`
                SELECT s.key, r.app_name
                FROM unnest(${startKeys}::int[], ${startIds}::uuid[], ${startRevisions}::int[]) AS s(key, node_id, start)
                JOIN desired_app_removal r ON r.node_id = s.node_id AND r.desired_revision > s.start`),
            ]);
      const putsByKey = new Map<number, DesiredAppSpec[]>();
      for (const row of instances) {
        const puts = putsByKey.get(row.key) ?? [];
        puts.push({
          app: row.app,
          version: row.version,
          artifactUrl: row.artifact_url,
          artifactSha256: row.artifact_sha256,
          runSpec: row.run_spec,
        });
        putsByKey.set(row.key, puts);
      }
      const removedByKey = new Map<number, string[]>();
      for (const row of removals) {
        removedByKey.set(row.key, [...(removedByKey.get(row.key) ?? []), row.app_name]);
      }
      const startOf = new Map(starts.map((s) => [s.key, s.start]));
      return nodes.map((node): NodeDelta => {
        const key = Number(node.idx);
        const start = startOf.get(key);
        let delta: DesiredDelta | null = null;
        if (start !== undefined) {
          // Ordered as desiredDeltaSince orders them.
          const put = (putsByKey.get(key) ?? []).sort((a, b) => a.app.localeCompare(b.app));
          const putNames = new Set(put.map((spec) => spec.app));
          const del = (removedByKey.get(key) ?? []).filter((name) => !putNames.has(name)).sort();
          delta = { from: start, to: node.to, put, del };
        }
        return {
          nodeId: node.id,
          organizationWireId: BigInt(node.org),
          nodeWireId: BigInt(node.wid),
          subjectSite: node.subject_site,
          status: node.status,
          appliedRevision: node.applied,
          delta,
        };
      });
    },
    { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead, maxWait: 15_000, timeout: 60_000 },
  );
}
