import { listSitesOutput, listSitesWithCounts } from "../domain/sites";
import { createTRPCRouter, organizationProcedure } from "../trpc";

export const siteRouter = createTRPCRouter({
  /** The active organization's sites with node counts per status. */
  list: organizationProcedure.output(listSitesOutput).query(({ ctx }) => listSitesWithCounts(ctx.tenantDb)),
});
