import { TRPCError } from "@trpc/server";
import { z } from "zod";
import {
  listProbes,
  listProbesInput,
  PROBE_ROLE,
  probeOutput,
  runProbe,
  runProbeInput,
} from "../domain/network-probes";
import {
  auditOfRun,
  bulkNodeCommandInput,
  commandRunOutput,
  nodeCommandInput,
  requireCommandRole,
  runCommandOnNodes,
} from "../domain/node-commands";
import { getNodeDetail, nodeByIdInput, nodeDetailOutput } from "../domain/node-detail";
import {
  availabilityOutput,
  nodeAvailability,
  nodeAvailabilityInput,
  nodeHistoryInput,
  nodeStatusHistory,
  statusEventPage,
} from "../domain/node-events";
import { bulkUpdateLabels, bulkUpdateLabelsInput, bulkUpdateLabelsOutput } from "../domain/node-labels";
import {
  closeLogs,
  LOG_READER_ROLE,
  logPollOutput,
  logSessionInput,
  openLogs,
  openLogsInput,
  pollLogs,
} from "../domain/node-logs";
import { moveNode, moveNodeInput, nodeSiteOutput } from "../domain/node-site";
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

export const nodeRouter = createTRPCRouter({
  /** One page of the active organization's nodes: filter by selector, status and text; sort; keyset cursor. */
  list: organizationProcedure
    // POST: the filter has a nested sort object, which query parameters cannot carry.
    .meta({
      openapi: {
        method: "POST",
        path: "/nodes/search",
        tags: ["Nodes"],
        summary: "List nodes (selector, status, search, sort; cursor)",
      },
    })
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
  counts: organizationProcedure
    .meta({
      openapi: { method: "GET", path: "/nodes/counts", tags: ["Nodes"], summary: "Node counts by status" },
    })
    .output(nodeCountsOutput)
    .query(({ ctx }) => countNodesByStatus(ctx.tenantDb)),

  /** Nodes per agent version. */
  breakdown: organizationProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/nodes/breakdown",
        tags: ["Nodes"],
        summary: "Node counts by agent version",
      },
    })
    .output(nodeBreakdownOutput)
    .query(({ ctx }) => countNodesByAgentVersion(ctx.tenantDb)),

  /** One node with its labels, lifecycle times and app instances; NOT_FOUND outside the organization. */
  // REST matches paths in the order procedures are declared: /nodes/counts and /nodes/breakdown
  // stay above /nodes/{id}, or "counts" would be taken for a node id.
  byId: organizationProcedure
    .meta({
      openapi: { method: "GET", path: "/nodes/{id}", tags: ["Nodes"], summary: "One node with its apps" },
    })
    .input(nodeByIdInput)
    .output(nodeDetailOutput)
    .query(async ({ ctx, input }) => {
      const node = await getNodeDetail(ctx.tenantDb, input.id);
      if (!node) throw new TRPCError({ code: "NOT_FOUND", message: `node ${input.id} not found` });
      return node;
    }),

  /** One node's status changes, newest first; cursor pagination; NOT_FOUND outside the organization. */
  statusHistory: organizationProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/nodes/{nodeId}/status-history",
        tags: ["Nodes"],
        summary: "A node's status changes, newest first (cursor)",
      },
    })
    .input(nodeHistoryInput)
    .output(statusEventPage)
    .query(async ({ ctx, input }) => {
      const page = await nodeStatusHistory(ctx.tenantDb, input);
      if (!page) throw new TRPCError({ code: "NOT_FOUND", message: `node ${input.nodeId} not found` });
      return page;
    }),

  /** One node's status over a time range as segments (the availability strip), and its online share. */
  availability: organizationProcedure
    .input(nodeAvailabilityInput)
    .output(availabilityOutput)
    .query(async ({ ctx, input }) => {
      const availability = await nodeAvailability(ctx.tenantDb, input);
      if (!availability)
        throw new TRPCError({ code: "NOT_FOUND", message: `node ${input.nodeId} not found` });
      return availability;
    }),

  /**
   * Runs a command on the nodes of a selection (restart, stop or start an app, re-run its health
   * check, force a report), one result per node. Roles per command: domain/node-commands.ts.
   */
  // Declared above /nodes/{id}/commands and the other /nodes/{id} paths (REST matches in order).
  bulkCommand: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "node.command", target: "node" },
      openapi: {
        method: "POST",
        path: "/nodes/commands",
        tags: ["Nodes"],
        summary: "Run a command on several nodes (per-node results)",
      },
    })
    .input(bulkNodeCommandInput)
    .output(commandRunOutput)
    .mutation(async ({ ctx, input }) => {
      requireCommandRole(ctx.actor.role, input.command);
      const run = await runCommandOnNodes(ctx.tenantDb, ctx.gateway, ctx.organization.id, input);
      ctx.audit.record({ targetId: null, before: null, after: auditOfRun(run) });
      return run;
    }),

  /** Runs a command on one node: an app command, a diagnostics bundle, a forced report. */
  command: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "node.command", target: "node" },
      openapi: {
        method: "POST",
        path: "/nodes/{id}/commands",
        tags: ["Nodes"],
        summary: "Run a command on a node (restart/stop/start an app, health, diagnostics, report)",
      },
    })
    .input(nodeCommandInput)
    .output(commandRunOutput)
    .mutation(async ({ ctx, input }) => {
      requireCommandRole(ctx.actor.role, input.command);
      const { id, ...command } = input;
      const run = await runCommandOnNodes(ctx.tenantDb, ctx.gateway, ctx.organization.id, {
        ...command,
        nodeIds: [id],
      });
      ctx.audit.record({ targetId: id, before: null, after: auditOfRun(run) });
      return run;
    }),

  /**
   * Moves a node to another site (or to none). Its credentials name its site, so it gets new
   * ones and must then reach the hub through its new site's leaf (domain/node-site.ts). Admins:
   * a node moved while it stays behind its old site's leaf goes offline.
   */
  moveToSite: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "node.move", target: "node" },
      openapi: {
        method: "POST",
        path: "/nodes/{id}/site",
        tags: ["Nodes"],
        summary:
          "Move a node to another site (or none): it gets new credentials and must reach the hub through its new site's leaf",
      },
    })
    .input(moveNodeInput)
    .output(nodeSiteOutput)
    .mutation(async ({ ctx, input }) => {
      const { before, after } = await moveNode(ctx.db, ctx.tenantDb, ctx.organization.id, input);
      ctx.audit.record({ targetId: input.id, before, after });
      return after;
    }),

  /** Adds and removes labels on the nodes a selector picks, or on a list of node ids. */
  bulkUpdateLabels: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "node.labels.update", target: "node" },
      openapi: {
        method: "POST",
        path: "/nodes/labels",
        tags: ["Nodes"],
        summary: "Add and remove labels on the nodes a selector or id list picks",
      },
    })
    .input(bulkUpdateLabelsInput)
    .output(bulkUpdateLabelsOutput)
    .mutation(async ({ ctx, input }) => {
      const result = await asBadRequest(() => bulkUpdateLabels(ctx.db, ctx.organization.id, input));
      const ids = "ids" in input.target ? input.target.ids : null;
      ctx.audit.record({
        targetId: ids?.length === 1 ? (ids[0] ?? null) : null,
        before: null,
        after: { target: input.target, add: input.add, remove: input.remove, updated: result.updated },
      });
      return result;
    }),

  /**
   * Opens a live log session on one of the node's apps: its last lines now, new ones through
   * `pollLogs`. Operators and up (domain/node-logs.ts says why not viewers). tRPC only: a stream
   * polled by the console, not a REST resource.
   */
  openLogs: organizationProcedure
    .meta({ role: LOG_READER_ROLE, audit: { action: "node.logs.open", target: "node" } })
    .input(openLogsInput)
    .output(logPollOutput)
    .mutation(async ({ ctx, input }) => {
      const poll = await openLogs(ctx.tenantDb, ctx.gateway, ctx.organization.id, input);
      ctx.audit.record({
        targetId: input.id,
        before: null,
        after: { app: input.app, tail: input.tail, follow: input.follow, sessionId: poll.sessionId },
      });
      return poll;
    }),

  /** New lines of a log session; polling is the viewer's heartbeat (stop, and the node stops). */
  pollLogs: organizationProcedure
    .meta({ role: LOG_READER_ROLE })
    .input(logSessionInput)
    .output(logPollOutput)
    .query(({ ctx, input }) => pollLogs(ctx.gateway, ctx.organization.id, input)),

  /** Ends a log session now (the viewer left the page). */
  closeLogs: organizationProcedure
    .meta({ role: LOG_READER_ROLE, audit: { action: "node.logs.close", target: "node" } })
    .input(logSessionInput)
    .output(z.object({ closed: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      const result = await closeLogs(ctx.gateway, ctx.organization.id, input);
      ctx.audit.record({ targetId: input.id, before: null, after: { sessionId: input.sessionId } });
      return result;
    }),

  /** Runs a throughput probe from the node to its leaf or the hub and stores the result. */
  probe: organizationProcedure
    .meta({
      role: PROBE_ROLE,
      audit: { action: "node.probe", target: "node" },
      openapi: {
        method: "POST",
        path: "/nodes/{id}/probes",
        tags: ["Nodes"],
        summary: "Run a throughput probe from a node to its leaf or the hub",
      },
    })
    .input(runProbeInput)
    .output(probeOutput)
    .mutation(async ({ ctx, input }) => {
      const probe = await runProbe(
        ctx.tenantDb,
        ctx.gateway,
        ctx.organization.id,
        `${ctx.actor.type}:${ctx.actor.id}`,
        input,
      );
      ctx.audit.record({
        targetId: input.id,
        before: null,
        after: { target: probe.target, ok: probe.ok, bytesPerSecond: probe.bytesPerSecond, code: probe.code },
      });
      return probe;
    }),

  /** The node's latest probes, newest first. */
  probes: organizationProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/nodes/{id}/probes",
        tags: ["Nodes"],
        summary: "A node's throughput probes",
      },
    })
    .input(listProbesInput)
    .output(z.array(probeOutput))
    .query(({ ctx, input }) => listProbes(ctx.tenantDb, input)),
});
