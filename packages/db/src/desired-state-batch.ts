import type { Db } from "./client";
import {
  DESIRED_REVISION_CHANNEL,
  type DesiredAppsChange,
  DesiredStateError,
  type ResolvedChange,
  resolveChange,
  UUID,
  unique,
  validateChangeIds,
} from "./desired-state";

/**
 * One desired-state change applied to many nodes at once (a rollout batch of 10,000 nodes), in
 * a handful of set-based statements instead of one transaction per node. Semantics are exactly
 * those of `setDesiredApps` applied to each node (test/desired-state-batch.test.ts checks it
 * against the per-node function over random states): a node whose state differs gets ONE new
 * revision that stamps its changed instances and its tombstones; an unchanged node uses none.
 *
 * Notifications: one NOTIFY per node would be 10,000 NOTIFYs in one commit, so node ids are
 * packed into comma-separated payloads under Postgres' 8,000-byte limit (~210 ids each). The
 * gateway's desired publisher splits them (a single id is a list of one, as setDesiredApps sends).
 *
 * Locking: the nodes' rows are locked in id order, so two batches never deadlock, and a
 * concurrent setDesiredApps on one of the nodes waits for (or is waited on by) the batch: its
 * revision comes strictly before or after, never interleaved.
 */

export interface NodeDesiredResult {
  nodeId: string;
  /** The node's desired revision after the call. */
  revision: number;
  /** False when nothing differed for this node (no revision used). */
  changed: boolean;
}

/** Largest NOTIFY payload we send (Postgres' limit is 8,000 bytes). */
const NOTIFY_PAYLOAD_MAX = 7_900;
/** A rollout batch commits in seconds; the default 5 s interactive-transaction limit is too short. */
const BATCH_TRANSACTION_OPTIONS = { maxWait: 15_000, timeout: 300_000 } as const;

/** What changes on one node: the pure core, also what makes the SQL below easy to check. */
export interface NodeChange {
  nodeId: string;
  revision: number;
  puts: ResolvedChange["versions"];
  dels: ResolvedChange["apps"];
}

/**
 * Per node, the puts whose version differs from the node's current one and the deletes of apps
 * the node has, exactly as setDesiredApps decides them. Nodes with neither are left out.
 */
export function planNodeChanges(
  nodes: ReadonlyArray<{ id: string; desiredRevision: number }>,
  current: ReadonlyArray<{ nodeId: string; appId: string; desiredVersionId: string }>,
  resolved: ResolvedChange,
): NodeChange[] {
  const byNode = new Map<string, Map<string, string>>();
  for (const row of current) {
    const apps = byNode.get(row.nodeId) ?? new Map<string, string>();
    apps.set(row.appId, row.desiredVersionId);
    byNode.set(row.nodeId, apps);
  }
  const changes: NodeChange[] = [];
  for (const node of nodes) {
    const apps = byNode.get(node.id);
    const puts = resolved.versions.filter((version) => apps?.get(version.appId) !== version.id);
    const dels = resolved.apps.filter((app) => apps?.has(app.id) ?? false);
    if (puts.length > 0 || dels.length > 0) {
      changes.push({ nodeId: node.id, revision: node.desiredRevision + 1, puts, dels });
    }
  }
  return changes;
}

/** Node ids packed into as few NOTIFY payloads as fit. */
export function notifyPayloads(nodeIds: readonly string[]): string[] {
  const payloads: string[] = [];
  let current = "";
  for (const id of nodeIds) {
    if (current && current.length + 1 + id.length > NOTIFY_PAYLOAD_MAX) {
      payloads.push(current);
      current = "";
    }
    current = current ? `${current},${id}` : id;
  }
  if (current) payloads.push(current);
  return payloads;
}

/** Node ids of a desired-revision NOTIFY payload (one id, or several separated by commas). */
export function nodeIdsOfNotification(payload: string): string[] {
  return payload.split(",").filter((id) => UUID.test(id));
}

/**
 * Applies `change` to every node of `nodeIds` (all of `organizationId`, else DesiredStateError
 * and nothing changes) in one transaction. Returns one result per distinct node, in input order.
 */
export async function setDesiredAppsForNodes(
  db: Db,
  organizationId: string,
  nodeIds: readonly string[],
  change: DesiredAppsChange,
): Promise<NodeDesiredResult[]> {
  const ids = validateChangeIds(organizationId, change);
  const targets = unique(nodeIds);
  const badNode = targets.find((id) => !UUID.test(id));
  if (badNode !== undefined) {
    throw new DesiredStateError(`node id must be a UUID, got ${JSON.stringify(badNode)}`);
  }
  if (targets.length === 0) return [];
  return db.$transaction(
    (tx) => setDesiredInTransaction(tx, organizationId, targets, ids),
    BATCH_TRANSACTION_OPTIONS,
  );
}

/**
 * setDesiredAppsForNodes inside the caller's transaction: the rollout controller commits a
 * batch's desired versions in the same transaction as the rollout's own state, so a crash
 * leaves either both or neither.
 */
export async function setDesiredAppsForNodesInTransaction(
  tx: Tx,
  organizationId: string,
  nodeIds: readonly string[],
  change: DesiredAppsChange,
): Promise<NodeDesiredResult[]> {
  const ids = validateChangeIds(organizationId, change);
  const targets = unique(nodeIds);
  const badNode = targets.find((id) => !UUID.test(id));
  if (badNode !== undefined) {
    throw new DesiredStateError(`node id must be a UUID, got ${JSON.stringify(badNode)}`);
  }
  if (targets.length === 0) return [];
  return setDesiredInTransaction(tx, organizationId, targets, ids);
}

async function setDesiredInTransaction(
  tx: Tx,
  organizationId: string,
  targets: string[],
  ids: ReturnType<typeof validateChangeIds>,
): Promise<NodeDesiredResult[]> {
  {
    // Lock in id order (no deadlock between batches); the same row lock setDesiredApps takes.
    const locked = await tx.$queryRaw<Array<{ id: string; desired_revision: number }>>`
      SELECT id::text, desired_revision FROM node
      WHERE organization_id = ${organizationId}::uuid AND id = ANY(${targets}::uuid[])
      ORDER BY id FOR UPDATE`;
    if (locked.length !== targets.length) {
      const found = new Set(locked.map((row) => row.id));
      const missing = targets.filter((id) => !found.has(id));
      throw new DesiredStateError(
        `nodes not found in organization ${organizationId}: ${missing.slice(0, 10).join(", ")}${missing.length > 10 ? ` and ${missing.length - 10} more` : ""}`,
      );
    }
    const resolved = await resolveChange(tx, organizationId, ids);
    const touchedApps = [...resolved.appsOfPuts, ...resolved.apps.map((app) => app.id)];
    const current =
      touchedApps.length === 0
        ? []
        : await tx.$queryRaw<Array<{ nodeId: string; appId: string; desiredVersionId: string }>>`
            SELECT node_id::text AS "nodeId", app_id::text AS "appId", desired_version_id::text AS "desiredVersionId"
            FROM app_instance
            WHERE node_id = ANY(${targets}::uuid[]) AND app_id = ANY(${touchedApps}::uuid[])`;
    const changes = planNodeChanges(
      locked.map((row) => ({ id: row.id, desiredRevision: row.desired_revision })),
      current,
      resolved,
    );
    if (changes.length > 0) await writeChanges(tx, organizationId, changes);

    const revisions = new Map(locked.map((row) => [row.id, row.desired_revision]));
    for (const node of changes) revisions.set(node.nodeId, node.revision);
    const changed = new Set(changes.map((node) => node.nodeId));
    return targets.map((nodeId) => ({
      nodeId,
      revision: revisions.get(nodeId) ?? 0,
      changed: changed.has(nodeId),
    }));
  }
}

/** An interactive transaction's client. */
export type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

/** The writes of setDesiredApps, one statement per kind for all nodes. */
async function writeChanges(tx: Tx, organizationId: string, changes: NodeChange[]): Promise<void> {
  const nodeIds = changes.map((node) => node.nodeId);
  const revisions = changes.map((node) => node.revision);
  await tx.$executeRaw`
    UPDATE node SET desired_revision = c.revision, updated_at = now()
    FROM unnest(${nodeIds}::uuid[], ${revisions}::int[]) AS c(id, revision)
    WHERE node.id = c.id`;

  const puts = changes.flatMap((node) => node.puts.map((version) => ({ node, version })));
  if (puts.length > 0) {
    const putNodes = puts.map((put) => put.node.nodeId);
    const putApps = puts.map((put) => put.version.appId);
    const putVersions = puts.map((put) => put.version.id);
    const putRevisions = puts.map((put) => put.node.revision);
    const putNames = puts.map((put) => put.version.appName);
    // New rows get a UUIDv7 like Prisma's uuid(7) (time-ordered ids keep the 1M-row table's
    // index local): the v4 random uuid with the millisecond clock over its first 48 bits and
    // its version nibble set to 7 (bits 52 and 53 turn 0100 into 0111).
    await tx.$executeRaw`
      INSERT INTO app_instance
        (id, organization_id, node_id, app_id, desired_version_id, desired_revision, updated_at)
      SELECT
        encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
          PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
          FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid,
        ${organizationId}::uuid, p.node_id, p.app_id, p.version_id, p.revision, now()
      FROM unnest(${putNodes}::uuid[], ${putApps}::uuid[], ${putVersions}::uuid[], ${putRevisions}::int[])
        AS p(node_id, app_id, version_id, revision)
      ON CONFLICT (node_id, app_id) DO UPDATE
        SET desired_version_id = EXCLUDED.desired_version_id,
            desired_revision = EXCLUDED.desired_revision,
            updated_at = now()`;
    await tx.$executeRaw`
      DELETE FROM desired_app_removal r
      USING unnest(${putNodes}::uuid[], ${putNames}::text[]) AS p(node_id, app_name)
      WHERE r.node_id = p.node_id AND r.app_name = p.app_name`;
  }

  const dels = changes.flatMap((node) => node.dels.map((app) => ({ node, app })));
  if (dels.length > 0) {
    const delNodes = dels.map((del) => del.node.nodeId);
    const delApps = dels.map((del) => del.app.id);
    const delNames = dels.map((del) => del.app.name);
    const delRevisions = dels.map((del) => del.node.revision);
    await tx.$executeRaw`
      DELETE FROM app_instance i
      USING unnest(${delNodes}::uuid[], ${delApps}::uuid[]) AS d(node_id, app_id)
      WHERE i.node_id = d.node_id AND i.app_id = d.app_id`;
    await tx.$executeRaw`
      INSERT INTO desired_app_removal (organization_id, node_id, app_name, desired_revision, removed_at)
      SELECT ${organizationId}::uuid, d.node_id, d.app_name, d.revision, now()
      FROM unnest(${delNodes}::uuid[], ${delNames}::text[], ${delRevisions}::int[]) AS d(node_id, app_name, revision)
      ON CONFLICT (node_id, app_name) DO UPDATE
        SET desired_revision = EXCLUDED.desired_revision, removed_at = EXCLUDED.removed_at`;
  }
  // Delivered at commit, only if the transaction commits.
  await tx.$executeRaw`
    SELECT pg_notify(${DESIRED_REVISION_CHANNEL}, payload)
    FROM unnest(${notifyPayloads(nodeIds)}::text[]) AS payload`;
}
