import { TRPCError } from "@trpc/server";
import { MetricsStoreError, nodeSeries, nodeSeriesInput, nodeSeriesOutput } from "../domain/metrics";
import { createTRPCRouter, organizationProcedure } from "../trpc";

/** Mimir's base URL from the process environment (the stack sets MIMIR_URL for web and tests). */
function mimirUrl(): string {
  const url = process.env.MIMIR_URL;
  if (!url)
    throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "MIMIR_URL is not set on the server" });
  return url;
}

export const metricsRouter = createTRPCRouter({
  /** CPU, memory, disk, network rates per interface, RTT and control bytes per message type of one node. */
  nodeSeries: organizationProcedure
    .input(nodeSeriesInput)
    .output(nodeSeriesOutput)
    .query(async ({ ctx, input }) => {
      // Answer NOT_FOUND for another organization's node instead of an empty chart.
      const node = await ctx.tenantDb.node.findFirst({ where: { id: input.nodeId }, select: { id: true } });
      if (!node) throw new TRPCError({ code: "NOT_FOUND", message: `node ${input.nodeId} not found` });
      try {
        return await nodeSeries(mimirUrl(), ctx.organization.id, input);
      } catch (error) {
        if (error instanceof MetricsStoreError) {
          throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: error.message, cause: error });
        }
        throw error;
      }
    }),
});
