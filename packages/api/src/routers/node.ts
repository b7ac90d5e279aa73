import { TRPCError } from "@trpc/server";
import { getNodeDetail, nodeByIdInput, nodeDetailOutput } from "../domain/node-detail";
import { bulkUpdateLabels, bulkUpdateLabelsInput, bulkUpdateLabelsOutput } from "../domain/node-labels";
import {
  countNodesByAgentVersion,
  countNodesByStatus,
  InvalidCursorError,
  listNodes,
  listNodesInput,
  listNodesOutput,
  nodeBreakdownOutput,
  nodeCountsOutput,
} from "../domain/nodes";
import { parseSelector, SelectorSyntaxError } from "../domain/selectors";
import { createTRPCRouter, organizationProcedure } from "../trpc";

/** Bad selectors and cursors are the caller's mistake: BAD_REQUEST with the parser's message. */
async function asBadRequest<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SelectorSyntaxError || error instanceof InvalidCursorError) {
      throw new TRPCError({ code: "BAD_REQUEST", message: error.message, cause: error });
    }
    throw error;
  }
}

const WRITER_ROLES = new Set(["owner", "admin", "operator"]);

export const nodeRouter = createTRPCRouter({
  /** One page of the active organization's nodes: filter by selector, status and text; sort; keyset cursor. */
  list: organizationProcedure
    .input(listNodesInput)
    .output(listNodesOutput)
    .query(({ ctx, input }) =>
      asBadRequest(async () =>
        listNodes(ctx.db, ctx.organization.id, {
          ...input,
          ...(input.selector ? { selectorRequirements: parseSelector(input.selector) } : {}),
        }),
      ),
    ),

  /** Number of nodes per status, and how many online nodes have a failed app. */
  counts: organizationProcedure.output(nodeCountsOutput).query(({ ctx }) => countNodesByStatus(ctx.tenantDb)),

  /** Nodes per agent version. */
  breakdown: organizationProcedure
    .output(nodeBreakdownOutput)
    .query(({ ctx }) => countNodesByAgentVersion(ctx.tenantDb)),

  /** One node with its labels, lifecycle times and app instances; NOT_FOUND outside the organization. */
  byId: organizationProcedure
    .input(nodeByIdInput)
    .output(nodeDetailOutput)
    .query(async ({ ctx, input }) => {
      const node = await getNodeDetail(ctx.tenantDb, input.id);
      if (!node) throw new TRPCError({ code: "NOT_FOUND", message: `node ${input.id} not found` });
      return node;
    }),

  /** Adds and removes labels on the nodes a selector picks, or on a list of node ids. */
  bulkUpdateLabels: organizationProcedure
    .meta({ role: "operator", audit: { action: "node.labels.update", target: "node" } })
    .input(bulkUpdateLabelsInput)
    .output(bulkUpdateLabelsOutput)
    .mutation(({ ctx, input }) => {
      // Also checked by the role middleware in trpc.ts; kept here so the rule holds on its own.
      if (!WRITER_ROLES.has(ctx.organization.role)) {
        throw new TRPCError({ code: "FORBIDDEN", message: "changing labels needs the operator role" });
      }
      return asBadRequest(() => bulkUpdateLabels(ctx.db, ctx.organization.id, input));
    }),
});
