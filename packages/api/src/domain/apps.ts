/**
 * Apps of one organization: list with version and instance counts, detail, create, rename,
 * delete, and where each version runs. The app's name is what agents know it by (their state
 * folder, their deltas, removal tombstones), so it cannot change, and the app cannot be
 * deleted, while any node has it: remove it from its nodes first (a rollout, or
 * setDesiredApps' `del`), which tells their agents.
 */
import { AppInstanceState, Prisma } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { appIdInput, appName, createAppInput, updateAppInput } from "../schemas/apps";
import type { TenantDb } from "./nodes";

import { ACTIVE_ROLLOUT_STATUSES } from "./rollouts";

/** Rollout states in which a rollout still acts on its version (its app cannot go away). */
export { ACTIVE_ROLLOUT_STATUSES, appIdInput, appName, createAppInput, updateAppInput };

const instanceStateSchema = z.enum(AppInstanceState);
type InstanceState = z.infer<typeof instanceStateSchema>;
const byState = z.record(instanceStateSchema, z.number().int());

export const appSummary = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  versions: z.number().int(),
  /** Nodes that have the app in their desired state. */
  instances: z.number().int(),
  /** Those instances by the state their agents report. */
  byState,
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type AppSummary = z.infer<typeof appSummary>;
export const listAppsOutput = z.array(appSummary);

const emptyByState = (): Record<InstanceState, number> => ({
  pending: 0,
  pulling: 0,
  starting: 0,
  running: 0,
  failed: 0,
  stopped: 0,
});

const appSelect = { id: true, name: true, description: true, createdAt: true, updatedAt: true } as const;

/** Every app of the organization, by name, with its counts (two grouped queries, not one per app). */
export async function listApps(db: TenantDb): Promise<AppSummary[]> {
  const [apps, versionCounts, stateCounts] = await Promise.all([
    db.app.findMany({ orderBy: { name: "asc" }, select: appSelect }),
    db.appVersion.groupBy({ by: ["appId"], _count: { _all: true } }),
    db.appInstance.groupBy({ by: ["appId", "state"], _count: { _all: true } }),
  ]);
  const versions = new Map(versionCounts.map((row) => [row.appId, row._count._all]));
  const states = new Map<string, Record<InstanceState, number>>();
  for (const row of stateCounts) {
    const counts = states.get(row.appId) ?? emptyByState();
    counts[row.state] += row._count._all;
    states.set(row.appId, counts);
  }
  return apps.map((app) => summarize(app, versions.get(app.id) ?? 0, states.get(app.id) ?? emptyByState()));
}

function summarize(
  app: { id: string; name: string; description: string | null; createdAt: Date; updatedAt: Date },
  versions: number,
  counts: Record<InstanceState, number>,
): AppSummary {
  return {
    ...app,
    versions,
    instances: Object.values(counts).reduce((a, b) => a + b, 0),
    byState: counts,
  };
}

function notFound(id: string): never {
  throw new TRPCError({ code: "NOT_FOUND", message: `app ${id} not found` });
}

/** One app with its counts; NOT_FOUND for an unknown or foreign id. */
export async function getApp(db: TenantDb, id: string): Promise<AppSummary> {
  const [app, versions, stateCounts] = await Promise.all([
    db.app.findFirst({ where: { id }, select: appSelect }),
    db.appVersion.count({ where: { appId: id } }),
    db.appInstance.groupBy({ by: ["state"], where: { appId: id }, _count: { _all: true } }),
  ]);
  if (!app) notFound(id);
  const counts = emptyByState();
  for (const row of stateCounts) counts[row.state] = row._count._all;
  return summarize(app, versions, counts);
}

function nameTaken(error: unknown, name: string | undefined): never {
  if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
    throw new TRPCError({ code: "CONFLICT", message: `an app named "${name}" already exists`, cause: error });
  }
  if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2025") {
    throw new TRPCError({ code: "NOT_FOUND", message: "app not found", cause: error });
  }
  throw error;
}

export async function createApp(
  db: TenantDb,
  organizationId: string,
  input: z.output<typeof createAppInput>,
) {
  try {
    const app = await db.app.create({
      data: { organizationId, name: input.name, description: input.description || null },
      select: { id: true },
    });
    return getApp(db, app.id);
  } catch (error) {
    nameTaken(error, input.name);
  }
}

export async function updateApp(db: TenantDb, input: z.output<typeof updateAppInput>) {
  const before = await getApp(db, input.id);
  if (input.name !== undefined && input.name !== before.name && before.instances > 0) {
    throw new TRPCError({
      code: "CONFLICT",
      message: `app ${before.name} is on ${before.instances} node${before.instances === 1 ? "" : "s"}, which know it by its name: remove it from them before renaming it`,
    });
  }
  try {
    await db.app.update({
      where: { id: input.id },
      data: {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description || null } : {}),
      },
    });
  } catch (error) {
    nameTaken(error, input.name);
  }
  return { before, after: await getApp(db, input.id) };
}

/** Deletes an app no node has and no rollout is acting on, with its versions. */
export async function deleteApp(db: TenantDb, id: string) {
  const before = await getApp(db, id);
  if (before.instances > 0) {
    throw new TRPCError({
      code: "CONFLICT",
      message: `app ${before.name} is still on ${before.instances} node${before.instances === 1 ? "" : "s"}: remove it from them first`,
    });
  }
  const activeRollouts = await db.rollout.count({
    where: { appVersion: { appId: id }, status: { in: [...ACTIVE_ROLLOUT_STATUSES] } },
  });
  if (activeRollouts > 0) {
    throw new TRPCError({
      code: "CONFLICT",
      message: `app ${before.name} has ${activeRollouts} active rollout${activeRollouts === 1 ? "" : "s"}: finish or abort them first`,
    });
  }
  try {
    await db.app.delete({ where: { id } });
  } catch (error) {
    // An instance added between the count and the delete: the version foreign key refuses.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2003") {
      throw new TRPCError({
        code: "CONFLICT",
        message: `app ${before.name} got nodes meanwhile`,
        cause: error,
      });
    }
    nameTaken(error, undefined);
  }
  return before;
}

export const deploymentRow = z.object({
  /** The version nodes are told to run. */
  desiredVersionId: z.string(),
  /** The version their agents report running; null before the first report. */
  observedVersionId: z.string().nullable(),
  state: instanceStateSchema,
  count: z.number().int(),
});

export const versionDeployment = z.object({
  id: z.string(),
  version: z.string(),
  /** Instances told to run this version, by reported state. */
  desired: z.object({ total: z.number().int(), byState }),
  /** Instances whose agent reports running this version (whatever they are told). */
  observed: z.object({ total: z.number().int(), byState }),
});

export const appDeploymentOutput = z.object({
  appId: z.string(),
  name: z.string(),
  instances: z.number().int(),
  /** Every version of the app, newest first, with where it is desired and where it runs. */
  versions: z.array(versionDeployment),
  /** The raw counts: instances by (desired version, observed version, state). */
  rows: z.array(deploymentRow),
});

/**
 * Where each version of an app runs: instance counts by desired version, observed version and
 * state, in one grouped query over the app's instances (no per-node or per-version query).
 */
export async function appDeployment(db: TenantDb, id: string): Promise<z.infer<typeof appDeploymentOutput>> {
  const [app, versions, groups] = await Promise.all([
    db.app.findFirst({ where: { id }, select: { id: true, name: true } }),
    db.appVersion.findMany({
      where: { appId: id },
      orderBy: { id: "desc" },
      select: { id: true, version: true },
    }),
    db.appInstance.groupBy({
      by: ["desiredVersionId", "observedVersionId", "state"],
      where: { appId: id },
      _count: { _all: true },
    }),
  ]);
  if (!app) notFound(id);
  const rows = groups.map((group) => ({
    desiredVersionId: group.desiredVersionId,
    observedVersionId: group.observedVersionId,
    state: group.state,
    count: group._count._all,
  }));
  const tally = (pick: (row: (typeof rows)[number]) => string | null, versionId: string) => {
    const counts = emptyByState();
    for (const row of rows) if (pick(row) === versionId) counts[row.state] += row.count;
    return { total: Object.values(counts).reduce((a, b) => a + b, 0), byState: counts };
  };
  return {
    appId: app.id,
    name: app.name,
    instances: rows.reduce((sum, row) => sum + row.count, 0),
    versions: versions.map((version) => ({
      ...version,
      desired: tally((row) => row.desiredVersionId, version.id),
      observed: tally((row) => row.observedVersionId, version.id),
    })),
    rows,
  };
}
