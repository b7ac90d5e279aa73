import type { Db } from "./client";
import { Prisma } from "./generated/prisma/client";

/**
 * Per-node desired state with revisions (docs/protocol.md "Desired state").
 *
 * Every change to a node's desired apps raises `node.desired_revision` by one and stamps the
 * changed instances (or, for removals, a `desired_app_removal` tombstone) with it. A delta since
 * revision R is every row stamped after R: two index range scans on `(node_id, desired_revision)`,
 * never a scan of the node's whole state. Raising the revision also notifies
 * DESIRED_REVISION_CHANNEL with the node id at commit, so the gateway publishes without polling.
 */

/** Postgres NOTIFY channel; payload = node id. */
export const DESIRED_REVISION_CHANNEL = "edgefleet_desired";

export interface DesiredAppsChange {
  /** App version ids to run (one per app; the version names its app). Unchanged ones are skipped. */
  put?: readonly string[];
  /** App ids to remove from the node. Apps not on the node are skipped. */
  del?: readonly string[];
}

export interface DesiredAppsResult {
  /** The node's desired revision after the call. */
  revision: number;
  /** False when nothing differed from the stored state (no revision was used). */
  changed: boolean;
}

export interface DesiredAppSpec {
  app: string;
  version: string;
  /** The HTTPS URL a `url` version was imported from; null for uploads (nodes fetch by sha256). */
  artifactUrl: string | null;
  artifactSha256: string | null;
  runSpec: Prisma.JsonValue;
}

export interface DesiredDelta {
  from: number;
  to: number;
  put: DesiredAppSpec[];
  /** Names of apps removed from the node. */
  del: string[];
}

/** The node, an app version or an app named in a change does not exist in this organization. */
export class DesiredStateError extends Error {
  override name = "DesiredStateError";
}

/**
 * Applies one change to a node's desired apps atomically, as one new revision.
 * Tenant-safe: the node, versions and apps must belong to `organizationId`, else DesiredStateError.
 */
export async function setDesiredApps(
  db: Db,
  organizationId: string,
  nodeId: string,
  change: DesiredAppsChange,
): Promise<DesiredAppsResult> {
  const ids = validateChangeIds(organizationId, change);
  if (!UUID.test(nodeId))
    throw new DesiredStateError(`node id must be a UUID, got ${JSON.stringify(nodeId)}`);
  return db.$transaction(async (tx) => {
    // Row lock: concurrent changes to one node take revisions one after the other.
    const [node] = await tx.$queryRaw<Array<{ desired_revision: number }>>`
      SELECT desired_revision FROM node
      WHERE id = ${nodeId}::uuid AND organization_id = ${organizationId}::uuid
      FOR UPDATE`;
    if (!node) throw new DesiredStateError(`node ${nodeId} not found in organization ${organizationId}`);
    const { versions, apps, appsOfPuts } = await resolveChange(tx, organizationId, ids);

    const existing = await tx.appInstance.findMany({
      where: { nodeId, appId: { in: [...appsOfPuts, ...ids.delIds] } },
      select: { appId: true, desiredVersionId: true },
    });
    const current = new Map(existing.map((instance) => [instance.appId, instance.desiredVersionId]));
    const puts = versions.filter((version) => current.get(version.appId) !== version.id);
    const dels = apps.filter((app) => current.has(app.id));
    if (puts.length === 0 && dels.length === 0) return { revision: node.desired_revision, changed: false };

    const revision = node.desired_revision + 1;
    await tx.node.update({ where: { id: nodeId }, data: { desiredRevision: revision } });
    for (const version of puts) {
      await tx.appInstance.upsert({
        where: { nodeId_appId: { nodeId, appId: version.appId } },
        create: {
          organizationId,
          nodeId,
          appId: version.appId,
          desiredVersionId: version.id,
          desiredRevision: revision,
        },
        update: { desiredVersionId: version.id, desiredRevision: revision },
      });
    }
    if (puts.length > 0) {
      await tx.desiredAppRemoval.deleteMany({
        where: { nodeId, appName: { in: puts.map((version) => version.appName) } },
      });
    }
    if (dels.length > 0) {
      await tx.appInstance.deleteMany({ where: { nodeId, appId: { in: dels.map((app) => app.id) } } });
      for (const app of dels) {
        await tx.desiredAppRemoval.upsert({
          where: { nodeId_appName: { nodeId, appName: app.name } },
          create: { organizationId, nodeId, appName: app.name, desiredRevision: revision },
          update: { desiredRevision: revision, removedAt: new Date() },
        });
      }
    }
    // Delivered at commit, only if the transaction commits.
    await tx.$executeRaw`SELECT pg_notify(${DESIRED_REVISION_CHANNEL}, ${nodeId})`;
    return { revision, changed: true };
  });
}

/** The ids of a change, deduplicated and checked to be UUIDs (Postgres would answer a driver error). */
export interface ChangeIds {
  putIds: string[];
  delIds: string[];
}

export function validateChangeIds(organizationId: string, change: DesiredAppsChange): ChangeIds {
  const putIds = unique(change.put ?? []);
  const delIds = unique(change.del ?? []);
  for (const [what, id] of [
    ["organization", organizationId],
    ...putIds.map((id) => ["app version", id]),
    ...delIds.map((id) => ["app", id]),
  ]) {
    if (!UUID.test(id ?? ""))
      throw new DesiredStateError(`${what} id must be a UUID, got ${JSON.stringify(id)}`);
  }
  return { putIds, delIds };
}

export interface ResolvedChange {
  versions: Array<{ id: string; appId: string; appName: string }>;
  apps: Array<{ id: string; name: string }>;
  appsOfPuts: string[];
}

/**
 * The versions and apps a change names, all of `organizationId` (else DesiredStateError), with
 * at most one version per app and no app both put and deleted.
 */
export async function resolveChange(
  db: Pick<Db, "appVersion" | "app">,
  organizationId: string,
  ids: ChangeIds,
): Promise<ResolvedChange> {
  const rows = await db.appVersion.findMany({
    where: { organizationId, id: { in: ids.putIds } },
    select: { id: true, appId: true, app: { select: { name: true } } },
  });
  const versions = rows.map((row) => ({ id: row.id, appId: row.appId, appName: row.app.name }));
  const missingVersions = ids.putIds.filter((id) => !versions.some((version) => version.id === id));
  if (missingVersions.length > 0) {
    throw new DesiredStateError(`app versions not found in this organization: ${missingVersions.join(", ")}`);
  }
  const appsOfPuts = versions.map((version) => version.appId);
  if (new Set(appsOfPuts).size !== appsOfPuts.length) {
    throw new DesiredStateError("put names two versions of the same app");
  }
  const apps = await db.app.findMany({
    where: { organizationId, id: { in: ids.delIds } },
    select: { id: true, name: true },
  });
  const missingApps = ids.delIds.filter((id) => !apps.some((app) => app.id === id));
  if (missingApps.length > 0) {
    throw new DesiredStateError(`apps not found in this organization: ${missingApps.join(", ")}`);
  }
  if (ids.delIds.some((id) => appsOfPuts.includes(id))) {
    throw new DesiredStateError("an app cannot be both put and deleted in one change");
  }
  return { versions, apps, appsOfPuts };
}

/**
 * What changed on a node after `fromRevision`; null when the node is at that revision already.
 * A `fromRevision` beyond the node's revision (an agent whose state the control plane does not
 * know, e.g. after a database restore) gets everything, as a delta from 0.
 * Read in one snapshot, so `to` and the rows always agree.
 */
export async function desiredDeltaSince(
  db: Db,
  nodeId: string,
  fromRevision: number,
): Promise<DesiredDelta | null> {
  if (!UUID.test(nodeId))
    throw new DesiredStateError(`node id must be a UUID, got ${JSON.stringify(nodeId)}`);
  if (!Number.isSafeInteger(fromRevision)) {
    throw new DesiredStateError(`revision must be an integer, got ${fromRevision}`);
  }
  return db.$transaction(
    async (tx) => {
      const node = await tx.node.findUnique({ where: { id: nodeId }, select: { desiredRevision: true } });
      if (!node) throw new DesiredStateError(`node ${nodeId} not found`);
      const to = node.desiredRevision;
      if (fromRevision === to) return null;
      const from = fromRevision > to || fromRevision < 0 ? 0 : fromRevision;
      const instances = await tx.appInstance.findMany({
        where: { nodeId, desiredRevision: { gt: from } },
        select: {
          app: { select: { name: true } },
          desiredVersion: {
            select: { version: true, artifactUrl: true, artifactSha256: true, runSpec: true },
          },
        },
      });
      const removals = await tx.desiredAppRemoval.findMany({
        where: { nodeId, desiredRevision: { gt: from } },
        select: { appName: true },
      });
      const put = instances
        .map(
          (instance): DesiredAppSpec => ({
            app: instance.app.name,
            version: instance.desiredVersion.version,
            artifactUrl: instance.desiredVersion.artifactUrl,
            artifactSha256: instance.desiredVersion.artifactSha256,
            runSpec: instance.desiredVersion.runSpec,
          }),
        )
        .sort((a, b) => a.app.localeCompare(b.app));
      const putNames = new Set(put.map((spec) => spec.app));
      // An app deleted and re-created under the same name: the live instance wins.
      const del = removals
        .map((removal) => removal.appName)
        .filter((name) => !putNames.has(name))
        .sort();
      return { from, to, put, del };
    },
    { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead },
  );
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function unique(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}
