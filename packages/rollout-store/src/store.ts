/**
 * A rollout's state in Postgres: the `rollout` row holds the small document (status, batch
 * progress) and `rollout_node` one row per node (plan batch, dispatch, rollback). Reads and writes
 * happen inside the caller's transaction, after `lockRollout` took the row lock, so the
 * controller's steps and people's actions on one rollout never interleave.
 */
import { type ActorType, FLEET_CHANGED_CHANNEL, Prisma, type RolloutStatus, type Tx } from "@edgefleet/db";
import {
  changedNodeRecords,
  type Decision,
  FINISHED_STATUSES,
  isRolloutStateDocument,
  joinRolloutState,
  type RolloutNodeRecord,
  type RolloutState,
  rolloutStateDocument,
} from "@edgefleet/rollout";

export interface RolloutRow {
  id: string;
  organizationId: string;
  appId: string;
  appVersionId: string;
  selector: string;
  siteIds: string[];
  status: RolloutStatus;
  state: unknown;
  stateVersion: number;
  leaseOwner: string | null;
  leaseUntil: Date | null;
}

/** Locks the rollout's row for the rest of the transaction; null when it does not exist (in that organization). */
export async function lockRollout(
  tx: Tx,
  rolloutId: string,
  organizationId?: string,
): Promise<RolloutRow | null> {
  return selectRollout(tx, rolloutId, organizationId, Prisma.sql`FOR UPDATE`);
}

/** The rollout's row without a lock (readers that must not wait for, or hold up, the controller). */
export function readRollout(
  db: Pick<Tx, "$queryRaw">,
  rolloutId: string,
  organizationId: string,
): Promise<RolloutRow | null> {
  return selectRollout(db, rolloutId, organizationId, Prisma.empty);
}

async function selectRollout(
  db: Pick<Tx, "$queryRaw">,
  rolloutId: string,
  organizationId: string | undefined,
  lock: Prisma.Sql,
): Promise<RolloutRow | null> {
  const rows = await db.$queryRaw<RolloutRow[]>(Prisma.sql`
    SELECT id::text, organization_id::text AS "organizationId", app_id::text AS "appId",
      app_version_id::text AS "appVersionId", selector, site_ids::text[] AS "siteIds", status::text AS status,
      state, state_version AS "stateVersion", lease_owner AS "leaseOwner", lease_until AS "leaseUntil"
    FROM rollout
    WHERE id = ${rolloutId}::uuid
      ${organizationId ? Prisma.sql`AND organization_id = ${organizationId}::uuid` : Prisma.empty}
    ${lock}`);
  return rows[0] ?? null;
}

interface NodeRow {
  nodeId: string;
  planBatch: number | null;
  planPosition: number | null;
  dispatchedAt: Date | null;
  dispatchBatch: number | null;
  catchUp: boolean;
  dispatchOrder: number | null;
  fromVersionId: string | null;
  toVersionId: string | null;
  rollbackBatch: number | null;
  rollbackPosition: number | null;
  rollbackToVersionId: string | null;
  rollbackAt: Date | null;
  rollbackOrder: number | null;
}

export class RolloutStateError extends Error {
  override name = "RolloutStateError";
}

/** The core's state of a locked rollout (the document joined with its node rows). */
export async function loadRolloutState(tx: Pick<Tx, "$queryRaw">, row: RolloutRow): Promise<RolloutState> {
  if (!isRolloutStateDocument(row.state)) {
    throw new RolloutStateError(`rollout ${row.id} has no state the controller wrote (seeded or damaged)`);
  }
  const rows = await tx.$queryRaw<NodeRow[]>(Prisma.sql`
    SELECT node_id::text AS "nodeId", plan_batch AS "planBatch", plan_position AS "planPosition",
      dispatched_at AS "dispatchedAt", dispatch_batch AS "dispatchBatch", catch_up AS "catchUp",
      dispatch_order AS "dispatchOrder", from_version_id::text AS "fromVersionId",
      to_version_id::text AS "toVersionId", rollback_batch AS "rollbackBatch",
      rollback_position AS "rollbackPosition", rollback_to_version_id::text AS "rollbackToVersionId",
      rollback_at AS "rollbackAt", rollback_order AS "rollbackOrder"
    FROM rollout_node WHERE rollout_id = ${row.id}::uuid`);
  const records: RolloutNodeRecord[] = rows.map((r) => ({
    nodeId: r.nodeId,
    planBatch: r.planBatch,
    planPosition: r.planPosition,
    dispatch:
      r.dispatchedAt === null || r.toVersionId === null
        ? null
        : {
            batch: r.dispatchBatch,
            catchUp: r.catchUp,
            fromVersionId: r.fromVersionId,
            toVersionId: r.toVersionId,
            dispatchedAt: r.dispatchedAt.getTime(),
            order: r.dispatchOrder ?? 0,
          },
    rollback:
      r.rollbackBatch === null
        ? null
        : { batch: r.rollbackBatch, position: r.rollbackPosition ?? 0, toVersionId: r.rollbackToVersionId },
    rollbackAt: r.rollbackAt?.getTime() ?? null,
    rollbackOrder: r.rollbackOrder,
  }));
  return joinRolloutState(row.state, records);
}

export interface RolloutEventInput {
  kind: string;
  message: string;
  actorType: ActorType;
  actorId: string | null;
  data?: unknown;
}

export interface SaveOptions {
  events: RolloutEventInput[];
  /** The decider's waits (node lists cut down to counts): what the page shows as "waiting for". */
  waits?: unknown[];
  /** When the controller must look again (null: only on a report or an action). */
  wakeAt: number | null;
}

const CHUNK = 5_000;

/** Writes `after` over `before` (node rows that changed, the document, the status columns, events). */
export async function saveRolloutState(
  tx: Tx,
  row: RolloutRow,
  before: RolloutState,
  after: RolloutState,
  options: SaveOptions,
): Promise<void> {
  const changed = changedNodeRecords(before, after);
  for (let i = 0; i < changed.length; i += CHUNK) await upsertNodes(tx, row, changed.slice(i, i + CHUNK));
  const document = rolloutStateDocument(after);
  const finished = FINISHED_STATUSES.includes(after.status);
  const started = after.plan !== null;
  await tx.$executeRaw(Prisma.sql`
    UPDATE rollout SET
      state = ${JSON.stringify(document)}::jsonb,
      status = ${after.status}::rollout_status,
      status_reason = ${after.statusReason},
      ${options.waits ? Prisma.sql`waits = ${JSON.stringify(options.waits)}::jsonb,` : Prisma.empty}
      wake_at = ${options.wakeAt === null ? null : new Date(options.wakeAt)}::timestamptz,
      state_version = state_version + 1,
      started_at = CASE WHEN ${started} THEN COALESCE(started_at, now()) ELSE started_at END,
      finished_at = CASE WHEN ${finished} THEN COALESCE(finished_at, now()) ELSE NULL END,
      updated_at = now()
    WHERE id = ${row.id}::uuid`);
  await insertEvents(tx, row, options.events);
  // Live pages (the console's `fleet.changes` subscription) refetch: the rollout moved.
  await tx.$executeRaw(Prisma.sql`SELECT pg_notify(${FLEET_CHANGED_CHANNEL}, ${row.organizationId})`);
}

async function upsertNodes(tx: Tx, row: RolloutRow, nodes: RolloutNodeRecord[]): Promise<void> {
  const col = <T>(pick: (n: RolloutNodeRecord) => T) => nodes.map(pick);
  const date = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms));
  await tx.$executeRaw(Prisma.sql`
    INSERT INTO rollout_node (rollout_id, organization_id, node_id, plan_batch, plan_position,
      dispatched_at, dispatch_batch, catch_up, dispatch_order, from_version_id, to_version_id,
      rollback_batch, rollback_position, rollback_to_version_id, rollback_at, rollback_order)
    SELECT ${row.id}::uuid, ${row.organizationId}::uuid, r.*
    FROM unnest(
      ${col((n) => n.nodeId)}::uuid[],
      ${col((n) => n.planBatch)}::int[],
      ${col((n) => n.planPosition)}::int[],
      ${col((n) => date(n.dispatch?.dispatchedAt))}::timestamptz[],
      ${col((n) => n.dispatch?.batch ?? null)}::int[],
      ${col((n) => n.dispatch?.catchUp ?? false)}::boolean[],
      ${col((n) => n.dispatch?.order ?? null)}::int[],
      ${col((n) => n.dispatch?.fromVersionId ?? null)}::uuid[],
      ${col((n) => n.dispatch?.toVersionId ?? null)}::uuid[],
      ${col((n) => n.rollback?.batch ?? null)}::int[],
      ${col((n) => n.rollback?.position ?? null)}::int[],
      ${col((n) => n.rollback?.toVersionId ?? null)}::uuid[],
      ${col((n) => date(n.rollbackAt))}::timestamptz[],
      ${col((n) => n.rollbackOrder)}::int[]
    ) AS r
    ON CONFLICT (rollout_id, node_id) DO UPDATE SET
      plan_batch = EXCLUDED.plan_batch, plan_position = EXCLUDED.plan_position,
      dispatched_at = EXCLUDED.dispatched_at, dispatch_batch = EXCLUDED.dispatch_batch,
      catch_up = EXCLUDED.catch_up, dispatch_order = EXCLUDED.dispatch_order,
      from_version_id = EXCLUDED.from_version_id, to_version_id = EXCLUDED.to_version_id,
      rollback_batch = EXCLUDED.rollback_batch, rollback_position = EXCLUDED.rollback_position,
      rollback_to_version_id = EXCLUDED.rollback_to_version_id, rollback_at = EXCLUDED.rollback_at,
      rollback_order = EXCLUDED.rollback_order`);
}

/** Appends timeline events (raw SQL: the enum's database names, e.g. `api_key`). */
export async function insertEvents(
  tx: Tx,
  row: Pick<RolloutRow, "id" | "organizationId">,
  events: RolloutEventInput[],
) {
  if (events.length === 0) return;
  await tx.$executeRaw(Prisma.sql`
    INSERT INTO rollout_event (organization_id, rollout_id, kind, message, actor_type, actor_id, data)
    SELECT ${row.organizationId}::uuid, ${row.id}::uuid, e.kind, e.message, e.actor_type::actor_type, e.actor_id, e.data
    FROM unnest(
      ${events.map((e) => e.kind)}::text[],
      ${events.map((e) => e.message)}::text[],
      ${events.map((e) => (e.actorType === "apiKey" ? "api_key" : e.actorType))}::text[],
      ${events.map((e) => e.actorId)}::text[],
      ${events.map((e) => (e.data === undefined ? null : JSON.stringify(e.data)))}::jsonb[]
    ) WITH ORDINALITY AS e(kind, message, actor_type, actor_id, data, n)
    ORDER BY e.n`);
}

/** The controller's decisions as timeline events (waits are state, not events). */
export function decisionEvents(decisions: readonly Decision[]): RolloutEventInput[] {
  const system = { actorType: "system" as const, actorId: "rollout-controller" };
  const events: RolloutEventInput[] = [];
  for (const d of decisions) {
    const phase = (p: string) => (p === "rollback" ? "rollback batch" : "batch");
    switch (d.kind) {
      case "start_batch":
        events.push({
          ...system,
          kind: "batch_started",
          message: `${phase(d.phase)} ${d.batch + 1} started`,
          data: d,
        });
        break;
      case "finish_batch":
        events.push({
          ...system,
          kind: "batch_finished",
          message: `${phase(d.phase)} ${d.batch + 1} ${d.verdict}: ${d.reason}`,
          data: d,
        });
        break;
      case "dispatch": {
        const what =
          d.purpose === "rollback"
            ? `rollback batch ${(d.batch ?? 0) + 1}`
            : d.purpose === "catch_up"
              ? d.batch === null
                ? "late joiners"
                : `catch-up of batch ${d.batch + 1}`
              : `batch ${(d.batch ?? 0) + 1}`;
        events.push({
          ...system,
          kind: "dispatched",
          message: `${d.nodes.length} node${d.nodes.length === 1 ? "" : "s"} dispatched (${what})`,
          data: {
            purpose: d.purpose,
            batch: d.batch,
            count: d.nodes.length,
            nodeIds: d.nodes.slice(0, 50).map((n) => n.nodeId),
          },
        });
        break;
      }
      case "set_status":
        events.push({
          ...system,
          kind: "status",
          message: `${d.status}: ${d.reason}`,
          data: { status: d.status },
        });
        break;
      case "start_rollback":
        events.push({
          ...system,
          kind: "rollback_started",
          message: d.reason,
          data: { batches: d.plan.batches.length },
        });
        break;
      case "wait":
        break;
    }
  }
  return events;
}

/** Waits as stored on the rollout row: node lists cut to a count and a sample. */
export function storedWaits(decisions: readonly Decision[]) {
  return decisions.flatMap((d) =>
    d.kind === "wait"
      ? [
          {
            reason: d.reason,
            message: d.message,
            until: d.until,
            siteId: d.siteId ?? null,
            nodes: d.nodeIds.length,
            sampleNodeIds: d.nodeIds.slice(0, 20),
          },
        ]
      : [],
  );
}
