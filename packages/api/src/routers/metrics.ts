import { TRPCError } from "@trpc/server";
import {
  MetricsStoreError,
  nodeSeries,
  nodeSeriesInput,
  nodeSeriesOutput,
  topBandwidthConsumers,
  topBandwidthInput,
  topBandwidthOutput,
} from "../domain/metrics";
import { readSlo, sloInput, sloOutput } from "../domain/slo";
import { createTRPCRouter, organizationProcedure } from "../trpc";

/** Mimir's base URL from the context (the web app passes its validated MIMIR_URL). */
function mimirUrl(url: string | null): string {
  if (!url)
    throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "the metrics store is not configured" });
  return url;
}

export const metricsRouter = createTRPCRouter({
  /** The active organization's SLIs (API p99, desired → running p99, connect → online p99, bytes per node per month) and objectives. */
  slo: organizationProcedure
    .input(sloInput)
    .output(sloOutput)
    .query(async ({ ctx, input }) => {
      try {
        return await readSlo(mimirUrl(ctx.mimirUrl), ctx.organization.id, input.window);
      } catch (error) {
        throw storeFailure(error);
      }
    }),

  /** CPU, memory, disk, network rates per interface, RTT and control bytes per message type of one node. */
  nodeSeries: organizationProcedure
    .input(nodeSeriesInput)
    .output(nodeSeriesOutput)
    .query(async ({ ctx, input }) => {
      // Answer NOT_FOUND for another organization's node instead of an empty chart.
      const node = await ctx.tenantDb.node.findFirst({ where: { id: input.nodeId }, select: { id: true } });
      if (!node) throw new TRPCError({ code: "NOT_FOUND", message: `node ${input.nodeId} not found` });
      try {
        return await nodeSeries(mimirUrl(ctx.mimirUrl), ctx.organization.id, input);
      } catch (error) {
        throw storeFailure(error);
      }
    }),

  /** The nodes that moved the most bytes over the window (all interfaces, rx + tx). */
  topBandwidth: organizationProcedure
    .input(topBandwidthInput)
    .output(topBandwidthOutput)
    .query(async ({ ctx, input }) => {
      try {
        return await topBandwidthConsumers(mimirUrl(ctx.mimirUrl), ctx.tenantDb, ctx.organization.id, input);
      } catch (error) {
        throw storeFailure(error);
      }
    }),
});

/** The metrics store's failures are ours, not the caller's: INTERNAL_SERVER_ERROR with its message. */
function storeFailure(error: unknown): unknown {
  return error instanceof MetricsStoreError
    ? new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: error.message, cause: error })
    : error;
}
