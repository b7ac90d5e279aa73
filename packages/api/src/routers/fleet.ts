import { TRPCError } from "@trpc/server";
import { fleetEventsInput, fleetStatusEvents, statusEventPage } from "../domain/node-events";
import { createTRPCRouter, organizationProcedure } from "../trpc";

export const fleetRouter = createTRPCRouter({
  /** The organization's most recent node status changes, newest first; cursor pagination. */
  events: organizationProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/fleet/events",
        tags: ["Nodes"],
        summary: "Recent node status changes (newest first; cursor)",
      },
    })
    .input(fleetEventsInput)
    .output(statusEventPage)
    .query(({ ctx, input }) => fleetStatusEvents(ctx.tenantDb, input)),

  /**
   * Live signal for the fleet pages (SSE): one message whenever a node of the active organization
   * changed status, coalesced to at most one a second. Carries no data: the page refetches what it
   * shows, through the same role and tenant checks as any query.
   */
  changes: organizationProcedure.meta({ role: "viewer" }).subscription(async function* ({ ctx, signal }) {
    if (!ctx.fleetChanges) {
      throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "live updates are not configured" });
    }
    yield* ctx.fleetChanges.changes(ctx.organization.id, signal ?? new AbortController().signal);
  }),
});
