/**
 * The nodes a rollout works on, read from the inventory in the shape the core wants: every node
 * of its target (label selector and/or sites, enrolled and approved, online or not) with the
 * rollout's app as its agent last reported it, plus every node the rollout has a row for that
 * left the target since (the core counts those as "left" and rolls them back with the others).
 * One query, whatever the fleet's size; the selector is matched in memory with the same code
 * as the planner's (a node's labels are a small map).
 */
import { Prisma, type Tx } from "@edgefleet/db";
import type { InstanceState, ObservedNode, TargetNode } from "@edgefleet/rollout";
import { matchesSelector, parseSelector } from "@edgefleet/selectors";

export interface RolloutTarget {
  organizationId: string;
  appId: string;
  /** Label selector ("" = every node). */
  selector: string;
  /** Empty: every site (and nodes without one). */
  siteIds: readonly string[];
}

export interface FleetNode extends ObservedNode {
  /** What its agent reports while pulling the version it switches to (live page). */
  pulledBytes: number | null;
  totalBytes: number | null;
  /** The version it is switching (or failed to switch) to, when switching. */
  targetVersionId: string | null;
}

type Queryable = Pick<Tx, "$queryRaw">;

interface Row {
  id: string;
  name: string;
  siteId: string | null;
  siteTimeZone: string | null;
  labels: Record<string, string> | null;
  status: string;
  currentVersionId: string | null;
  targetVersionId: string | null;
  instanceState: InstanceState | null;
  since: Date | null;
  reason: string | null;
  pulledBytes: bigint | null;
  totalBytes: bigint | null;
  tracked: boolean;
}

/**
 * Observed nodes of a rollout's target (`rolloutId` null: a rollout not created yet, e.g. the
 * preview). Nodes that are `pending` (not approved) or revoked are never in a target.
 */
export async function loadRolloutFleet(
  db: Queryable,
  target: RolloutTarget,
  rolloutId: string | null,
): Promise<FleetNode[]> {
  const requirements = parseSelector(target.selector);
  const sites = [...target.siteIds];
  const rows = await db.$queryRaw<Row[]>(Prisma.sql`
    SELECT n.id::text AS id, n.name, n.site_id::text AS "siteId", s.time_zone AS "siteTimeZone",
      n.labels, n.status::text AS status,
      i.observed_version_id::text AS "currentVersionId", i.target_version_id::text AS "targetVersionId",
      i.state::text AS "instanceState", i.state_changed_at AS since, i.reason,
      i.pulled_bytes AS "pulledBytes", i.total_bytes AS "totalBytes",
      (rn.node_id IS NOT NULL) AS tracked
    FROM node n
    LEFT JOIN site s ON s.id = n.site_id
    LEFT JOIN app_instance i ON i.node_id = n.id AND i.app_id = ${target.appId}::uuid
    LEFT JOIN rollout_node rn ON rn.rollout_id = ${rolloutId}::uuid AND rn.node_id = n.id
    WHERE n.organization_id = ${target.organizationId}::uuid
      AND ((n.status IN ('online', 'offline')
            AND (cardinality(${sites}::uuid[]) = 0 OR n.site_id = ANY(${sites}::uuid[])))
           OR rn.node_id IS NOT NULL)`);
  const nodes: FleetNode[] = [];
  for (const row of rows) {
    const labels = row.labels ?? {};
    const inTarget =
      (row.status === "online" || row.status === "offline") &&
      (sites.length === 0 || (row.siteId !== null && sites.includes(row.siteId))) &&
      matchesSelector(requirements, labels);
    if (!inTarget && !row.tracked) continue;
    nodes.push({
      id: row.id,
      name: row.name,
      siteId: row.siteId,
      siteTimeZone: row.siteTimeZone,
      labels,
      online: row.status === "online",
      currentVersionId: row.currentVersionId,
      inTarget,
      instance:
        row.instanceState === null
          ? null
          : { state: row.instanceState, since: row.since?.getTime() ?? 0, reason: row.reason },
      pulledBytes: row.pulledBytes === null ? null : Number(row.pulledBytes),
      totalBytes: row.totalBytes === null ? null : Number(row.totalBytes),
      targetVersionId: row.targetVersionId,
    });
  }
  return nodes;
}

/** The planner's view of the nodes in the target now (what `start` freezes into the plan). */
export function targetNodes(fleet: readonly FleetNode[]): TargetNode[] {
  return fleet
    .filter((n) => n.inTarget)
    .map(({ id, name, siteId, siteTimeZone, labels, online, currentVersionId }) => ({
      id,
      name,
      siteId,
      siteTimeZone,
      labels,
      online,
      currentVersionId,
    }));
}
