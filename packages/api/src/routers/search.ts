import { searchByName, searchInput, searchOutput } from "../domain/search";
import { createTRPCRouter, organizationProcedure } from "../trpc";

export const searchRouter = createTRPCRouter({
  /** Nodes, sites, apps and rollouts (by their app's name) of the active organization whose name contains the text. */
  byName: organizationProcedure
    .input(searchInput)
    .output(searchOutput)
    .query(({ ctx, input }) => searchByName(ctx.db, ctx.organization.id, input)),
});
