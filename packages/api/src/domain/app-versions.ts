/**
 * Versions of an app. A version is immutable once created: its label, run spec and artifact
 * source never change (there is no update), only its artifact's state moves, once:
 * pending -> ready (sha256 and size known, in the organization's object store) or failed (why).
 * - source `url`: the gateway's importer fetches the HTTPS URL into the store (poll the version);
 * - source `upload`: the bytes are sent to PUT /api/v1/apps/{appId}/versions/{id}/artifact
 *   (artifact-upload.ts), streamed through the gateway into the store.
 * A sha256 given at creation is a promise: content that hashes otherwise fails the version.
 * Deleting is refused while instances desire or run the version, or a rollout acts on it.
 */
// The run spec's one schema, from its own module: the console bundles this file, and the
// protocol index's `.js`-suffixed re-exports are not resolvable by Next's bundler.
import { runSpecSchema } from "@edgefleet/agent-sdk/run-spec";
import { type AppVersion, Prisma } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { artifactInput, createVersionInput, sha256Hex, versionLabel } from "../schemas/apps";
import { ACTIVE_ROLLOUT_STATUSES } from "./apps";
import type { TenantDb } from "./nodes";
import type { Actor } from "./roles";

export { artifactInput, createVersionInput, sha256Hex, versionLabel };

export const versionIdInput = z.object({ appId: z.uuid(), id: z.uuid() });

export const VERSION_PAGE_MAX = 200;
export const listVersionsInput = z.object({
  appId: z.uuid(),
  limit: z.coerce.number().int().min(1).max(VERSION_PAGE_MAX).default(50),
  /** `nextCursor` of the previous page. */
  cursor: z.uuid().optional(),
});

export const artifactOutput = z.object({
  source: z.enum(["upload", "url"]),
  /** The HTTPS URL it is imported from (source url). */
  url: z.string().nullable(),
  /** Lower-case hex SHA-256; for a pending version, the hash its content must have (if declared). */
  sha256: z.string().nullable(),
  /** Bytes, once ready. */
  size: z.number().int().nullable(),
  state: z.enum(["pending", "ready", "failed"]),
  /** Why it failed. */
  error: z.string().nullable(),
});

export const versionDetail = z.object({
  id: z.string(),
  appId: z.string(),
  version: z.string(),
  runSpec: runSpecSchema,
  artifact: artifactOutput,
  createdBy: z.string().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type VersionDetail = z.infer<typeof versionDetail>;

export const listVersionsOutput = z.object({
  items: z.array(versionDetail),
  nextCursor: z.string().nullable(),
});

export function toVersionDetail(row: AppVersion): VersionDetail {
  return {
    id: row.id,
    appId: row.appId,
    version: row.version,
    // Stored through createVersion's schema; an older row that does not parse is shown as stored.
    runSpec: runSpecSchema.safeParse(row.runSpec).data ?? (row.runSpec as VersionDetail["runSpec"]),
    artifact: {
      source: row.artifactSource,
      url: row.artifactUrl,
      sha256: row.artifactSha256,
      size: row.artifactSize === null ? null : Number(row.artifactSize),
      state: row.artifactState,
      error: row.artifactError,
    },
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function versionNotFound(id: string): never {
  throw new TRPCError({ code: "NOT_FOUND", message: `app version ${id} not found` });
}

async function requireApp(db: TenantDb, appId: string) {
  const app = await db.app.findFirst({ where: { id: appId }, select: { id: true, name: true } });
  if (!app) throw new TRPCError({ code: "NOT_FOUND", message: `app ${appId} not found` });
  return app;
}

/** A version of `appId`; NOT_FOUND for an unknown id, another app's or another organization's. */
export async function getVersion(db: TenantDb, appId: string, id: string): Promise<VersionDetail> {
  const row = await db.appVersion.findFirst({ where: { id, appId } });
  if (!row) versionNotFound(id);
  return toVersionDetail(row);
}

/** Newest first (ids are UUIDv7: id order is creation order), keyset-paginated. */
export async function listVersions(
  db: TenantDb,
  input: z.output<typeof listVersionsInput>,
): Promise<z.infer<typeof listVersionsOutput>> {
  await requireApp(db, input.appId);
  const rows = await db.appVersion.findMany({
    where: { appId: input.appId, ...(input.cursor ? { id: { lt: input.cursor } } : {}) },
    orderBy: { id: "desc" },
    take: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  return {
    items: page.map(toVersionDetail),
    nextCursor: rows.length > input.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

export async function createVersion(
  db: TenantDb,
  organizationId: string,
  createdBy: string,
  input: z.output<typeof createVersionInput>,
): Promise<VersionDetail> {
  const app = await requireApp(db, input.appId);
  try {
    const row = await db.appVersion.create({
      data: {
        organizationId,
        appId: app.id,
        version: input.version,
        runSpec: input.runSpec as Prisma.InputJsonValue,
        artifactSource: input.artifact.source,
        artifactUrl: input.artifact.source === "url" ? input.artifact.url : null,
        artifactSha256: input.artifact.sha256 ?? null,
        artifactState: "pending",
        createdBy,
      },
    });
    return toVersionDetail(row);
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
      throw new TRPCError({
        code: "CONFLICT",
        message: `app ${app.name} already has a version ${input.version}: versions are immutable, give the new one its own label`,
        cause: error,
      });
    }
    throw error;
  }
}

/** Deletes a version no instance desires or runs and no active rollout acts on. */
export async function deleteVersion(db: TenantDb, appId: string, id: string): Promise<VersionDetail> {
  const before = await getVersion(db, appId, id);
  const [desired, observed, rollouts] = await Promise.all([
    db.appInstance.count({ where: { desiredVersionId: id } }),
    db.appInstance.count({ where: { observedVersionId: id } }),
    db.rollout.count({ where: { appVersionId: id, status: { in: [...ACTIVE_ROLLOUT_STATUSES] } } }),
  ]);
  if (desired > 0 || observed > 0 || rollouts > 0) {
    const uses = [
      desired > 0 ? `${desired} node${desired === 1 ? " is" : "s are"} told to run it` : null,
      observed > 0 ? `${observed} node${observed === 1 ? " runs" : "s run"} it` : null,
      rollouts > 0
        ? `${rollouts} active rollout${rollouts === 1 ? "" : "s"} deploy${rollouts === 1 ? "s" : ""} it`
        : null,
    ].filter(Boolean);
    throw new TRPCError({
      code: "CONFLICT",
      message: `version ${before.version} is in use (${uses.join(", ")}): move those nodes to another version first`,
    });
  }
  try {
    await db.appVersion.delete({ where: { id } });
  } catch (error) {
    // An instance took it between the counts and the delete: the foreign key refuses.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2003") {
      throw new TRPCError({
        code: "CONFLICT",
        message: `version ${before.version} got nodes meanwhile: move them to another version first`,
        cause: error,
      });
    }
    throw error;
  }
  return before;
}

export const uploadTargetOutput = z.object({
  organizationId: z.string(),
  /** Who uploads (the audit row of the outcome names them). */
  actor: z.object({
    type: z.enum(["user", "apiKey"]),
    id: z.string(),
    role: z.enum(["owner", "admin", "operator", "viewer"]),
  }),
  appId: z.string(),
  versionId: z.string(),
  /** The hash the upload must have, if declared at creation. */
  declaredSha256: z.string().nullable(),
});

/** The version an upload goes to: an `upload` version still waiting for its bytes. */
export async function uploadTarget(
  db: TenantDb,
  organizationId: string,
  actor: Actor,
  appId: string,
  id: string,
): Promise<z.infer<typeof uploadTargetOutput>> {
  const version = await getVersion(db, appId, id);
  if (version.artifact.source !== "upload") {
    throw new TRPCError({
      code: "CONFLICT",
      message: `version ${version.version} imports its artifact from a URL; it takes no upload`,
    });
  }
  if (version.artifact.state !== "pending") {
    throw new TRPCError({
      code: "CONFLICT",
      message: `version ${version.version} already has its artifact (${version.artifact.state}): versions are immutable, create a new one`,
    });
  }
  return { organizationId, actor, appId, versionId: id, declaredSha256: version.artifact.sha256 };
}

/**
 * Records an upload's outcome on its version, once: ready with the hash and size the gateway
 * stored, or failed with the reason. Only a pending upload version moves (a concurrent upload
 * that finished first wins); returns the version after, or null when it had moved already.
 */
export async function recordUploadOutcome(
  db: TenantDb,
  target: { appId: string; versionId: string },
  outcome: { ready: { sha256: string; size: number } } | { failed: string },
): Promise<{ before: VersionDetail; after: VersionDetail } | null> {
  const before = await getVersion(db, target.appId, target.versionId);
  const { count } = await db.appVersion.updateMany({
    where: { id: target.versionId, appId: target.appId, artifactState: "pending", artifactSource: "upload" },
    data:
      "ready" in outcome
        ? {
            artifactState: "ready",
            artifactSha256: outcome.ready.sha256,
            artifactSize: BigInt(outcome.ready.size),
            artifactError: null,
          }
        : { artifactState: "failed", artifactError: outcome.failed },
  });
  if (count === 0) return null;
  return { before, after: await getVersion(db, target.appId, target.versionId) };
}
