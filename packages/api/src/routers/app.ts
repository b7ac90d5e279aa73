import {
  appDeployment,
  appDeploymentOutput,
  appIdInput,
  appSummary,
  createApp,
  createAppInput,
  deleteApp,
  getApp,
  listApps,
  listAppsOutput,
  updateApp,
  updateAppInput,
} from "../domain/apps";
import { createTRPCRouter, organizationProcedure } from "../trpc";

const tags = ["Apps"];

export const appsRouter = createTRPCRouter({
  /** The organization's apps with version counts and instances by state. */
  list: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/apps", tags, summary: "List apps with instance counts" } })
    .output(listAppsOutput)
    .query(({ ctx }) => listApps(ctx.tenantDb)),

  byId: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/apps/{id}", tags, summary: "An app with instance counts" } })
    .input(appIdInput)
    .output(appSummary)
    .query(({ ctx, input }) => getApp(ctx.tenantDb, input.id)),

  /** Where each version runs: instances by desired version, observed version and state. */
  deployment: organizationProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/apps/{id}/deployment",
        tags,
        summary: "Where each version of an app runs (counts by version and state)",
      },
    })
    .input(appIdInput)
    .output(appDeploymentOutput)
    .query(({ ctx, input }) => appDeployment(ctx.tenantDb, input.id)),

  create: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "app.create", target: "app" },
      openapi: { method: "POST", path: "/apps", tags, summary: "Create an app" },
    })
    .input(createAppInput)
    .output(appSummary)
    .mutation(({ ctx, input }) => createApp(ctx.tenantDb, ctx.organization.id, input)),

  /** Renaming is refused (CONFLICT) while nodes have the app: agents know it by its name. */
  update: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "app.update", target: "app" },
      openapi: { method: "PATCH", path: "/apps/{id}", tags, summary: "Rename or describe an app" },
    })
    .input(updateAppInput)
    .output(appSummary)
    .mutation(async ({ ctx, input }) => {
      const { before, after } = await updateApp(ctx.tenantDb, input);
      ctx.audit.record({ targetId: input.id, before, after });
      return after;
    }),

  /** Refused (CONFLICT) while nodes have the app or a rollout is active; deletes its versions. */
  delete: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "app.delete", target: "app" },
      openapi: { method: "DELETE", path: "/apps/{id}", tags, summary: "Delete an app no node has" },
    })
    .input(appIdInput)
    .output(appSummary)
    .mutation(async ({ ctx, input }) => {
      const before = await deleteApp(ctx.tenantDb, input.id);
      ctx.audit.record({ targetId: input.id, before, after: null });
      return before;
    }),
});
