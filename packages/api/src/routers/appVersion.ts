import {
  createVersion,
  createVersionInput,
  deleteVersion,
  getVersion,
  listVersions,
  listVersionsInput,
  listVersionsOutput,
  uploadTarget,
  uploadTargetOutput,
  versionDetail,
  versionIdInput,
} from "../domain/app-versions";
import { createTRPCRouter, organizationProcedure } from "../trpc";

const tags = ["Apps"];

export const appVersionRouter = createTRPCRouter({
  list: organizationProcedure
    .meta({
      openapi: { method: "GET", path: "/apps/{appId}/versions", tags, summary: "List an app's versions" },
    })
    .input(listVersionsInput)
    .output(listVersionsOutput)
    .query(({ ctx, input }) => listVersions(ctx.tenantDb, input)),

  /** Poll this for an artifact's state (pending → ready or failed). */
  byId: organizationProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/apps/{appId}/versions/{id}",
        tags,
        summary: "A version, with its artifact's state",
      },
    })
    .input(versionIdInput)
    .output(versionDetail)
    .query(({ ctx, input }) => getVersion(ctx.tenantDb, input.appId, input.id)),

  /**
   * A new, immutable version. Its artifact starts `pending`: a `url` artifact is imported by the
   * gateway (poll the version), an `upload` one waits for PUT /apps/{appId}/versions/{id}/artifact.
   */
  create: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "appVersion.create", target: "appVersion" },
      openapi: {
        method: "POST",
        path: "/apps/{appId}/versions",
        tags,
        summary: "Add a version (run spec and artifact source)",
        description:
          'The artifact is `{source: "url", url, sha256?}` (the gateway imports the HTTPS URL; poll the version ' +
          'until its artifact is ready or failed) or `{source: "upload", sha256?}` (then PUT the bytes to ' +
          "/apps/{appId}/versions/{id}/artifact). A declared sha256 must match the content.",
      },
    })
    .input(createVersionInput)
    .output(versionDetail)
    .mutation(({ ctx, input }) => createVersion(ctx.tenantDb, ctx.organization.id, ctx.actor.id, input)),

  /** Refused (CONFLICT) while nodes desire or run the version, or an active rollout deploys it. */
  delete: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "appVersion.delete", target: "appVersion" },
      openapi: {
        method: "DELETE",
        path: "/apps/{appId}/versions/{id}",
        tags,
        summary: "Delete a version no node uses",
      },
    })
    .input(versionIdInput)
    .output(versionDetail)
    .mutation(async ({ ctx, input }) => {
      const before = await deleteVersion(ctx.tenantDb, input.appId, input.id);
      ctx.audit.record({ targetId: input.id, before, after: null });
      return before;
    }),

  /**
   * Authorizes an artifact upload (artifact-upload.ts asks this first, before reading a byte):
   * an operator's, for a pending `upload` version of the caller's organization. Reads only.
   */
  uploadTarget: organizationProcedure
    .meta({ role: "operator" })
    .input(versionIdInput)
    .output(uploadTargetOutput)
    .query(({ ctx, input }) =>
      uploadTarget(ctx.tenantDb, ctx.organization.id, ctx.actor, input.appId, input.id),
    ),
});
