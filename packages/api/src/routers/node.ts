import {
  countNodesByStatus,
  listNodes,
  listNodesInput,
  listNodesOutput,
  nodeCountsOutput,
} from "../domain/nodes";
import { createTRPCRouter, organizationProcedure } from "../trpc";

export const nodeRouter = createTRPCRouter({
  /** One page of the active organization's nodes, ordered by name. */
  list: organizationProcedure
    .input(listNodesInput)
    .output(listNodesOutput)
    .query(({ ctx, input }) => listNodes(ctx.tenantDb, input)),

  /** Number of nodes of the active organization per status. */
  counts: organizationProcedure.output(nodeCountsOutput).query(({ ctx }) => countNodesByStatus(ctx.tenantDb)),
});
