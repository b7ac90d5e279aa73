import type { PersonAction } from "@edgefleet/rollout-store";
import { z } from "zod";
import {
  checkGateQueries,
  checkGateQuery,
  checkGateQueryInput,
  checkGateQueryOutput,
  getRolloutGates,
  rolloutGatesOutput,
} from "../domain/rollout-gates";
import {
  getRolloutSiteUplinks,
  rolloutSiteUplinksInput,
  rolloutSiteUplinksOutput,
} from "../domain/rollout-site-uplinks";
import {
  actOn,
  createRollout,
  getRolloutDetail,
  listRolloutNodes,
  listRollouts,
  listRolloutsInput,
  listRolloutsOutput,
  previewRollout,
  rolloutDetailOutput,
  rolloutIdInput,
  rolloutNodesInput,
  rolloutNodesOutput,
  rolloutNoteInput,
  rolloutPlanInput,
  rolloutPreviewOutput,
  rolloutSummary,
} from "../domain/rollouts";
import { createTRPCRouter, organizationProcedure } from "../trpc";

const tags = ["Rollouts"];
const actionOutput = z.object({ id: z.string(), before: z.string(), status: z.string() });

/** start, pause, resume, approve, abort, rollback: operator, audited, one shape each. */
function action(type: PersonAction["type"], summary: string) {
  return organizationProcedure
    .meta({
      role: "operator",
      audit: { action: `rollout.${type}`, target: "rollout" },
      openapi: { method: "POST", path: `/rollouts/{id}/${type}`, tags, summary },
    })
    .input(rolloutNoteInput)
    .output(actionOutput)
    .mutation(async ({ ctx, input }) => {
      const personAction = { type, ...(input.note ? { note: input.note } : {}) } as PersonAction;
      const { before, after } = await actOn(ctx.db, ctx.organization.id, ctx.actor, input.id, personAction);
      ctx.audit.record({
        targetId: input.id,
        before: { status: before },
        after: { status: after, note: input.note ?? null },
      });
      return { id: input.id, before, status: after };
    });
}

export const rolloutRouter = createTRPCRouter({
  /** Dry run: the batches (per-site counts) the rollout would have if started now. */
  preview: organizationProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/rollouts/preview",
        tags,
        summary: "Preview a rollout's batches (dry run)",
      },
    })
    .input(rolloutPlanInput)
    .output(rolloutPreviewOutput)
    .query(async ({ ctx, input }) => {
      // The editor's check too: operator PromQL in gates must run against Mimir as this organization.
      await checkGateQueries(ctx.mimirUrl, ctx.organization.id, input.strategy);
      return previewRollout(ctx.db, ctx.tenantDb, ctx.organization.id, input);
    }),

  /**
   * The PromQL editor's check: runs one gate query against Mimir as this organization (never
   * another tenant) and says how many series and nodes it gives, or why Mimir refused it.
   */
  checkGateQuery: organizationProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/rollouts/gate-queries/check",
        tags,
        summary: "Check a metric gate's PromQL against Mimir (as the organization)",
      },
    })
    .input(checkGateQueryInput)
    .output(checkGateQueryOutput)
    .query(({ ctx, input }) => checkGateQuery(ctx.mimirUrl, ctx.organization.id, input)),

  create: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "rollout.create", target: "rollout" },
      openapi: {
        method: "POST",
        path: "/rollouts",
        tags,
        summary: "Create a rollout (pending until started)",
      },
    })
    .input(rolloutPlanInput)
    .output(rolloutSummary)
    .mutation(async ({ ctx, input }) => {
      // Operator PromQL in gates is checked against Mimir (as this organization) first.
      await checkGateQueries(ctx.mimirUrl, ctx.organization.id, input.strategy);
      const created = await createRollout(ctx.db, ctx.tenantDb, ctx.organization.id, ctx.actor, input);
      ctx.audit.record({
        targetId: created.id,
        before: null,
        after: { ...created, strategy: input.strategy },
      });
      return created;
    }),

  /** Newest first; `appId` for an app's rollouts. */
  list: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/rollouts", tags, summary: "List rollouts" } })
    .input(listRolloutsInput)
    .output(listRolloutsOutput)
    .query(({ ctx, input }) => listRollouts(ctx.tenantDb, input)),

  /** The live page: batches with counts by state, pulling bytes, failures, waits, actions, events. */
  byId: organizationProcedure
    .meta({
      openapi: { method: "GET", path: "/rollouts/{id}", tags, summary: "A rollout with its live progress" },
    })
    .input(rolloutIdInput)
    .output(rolloutDetailOutput)
    .query(({ ctx, input }) => getRolloutDetail(ctx.db, ctx.tenantDb, ctx.actor, input.id)),

  /**
   * Metric gates, batch by batch: where judging stands, the verdict, and per gate the numbers
   * (medians, p-value, effect), the PromQL run, the per-node values and canary vs baseline series.
   */
  gates: organizationProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/rollouts/{id}/gates",
        tags,
        summary: "A rollout's metric gates: verdicts, numbers and canary vs baseline series",
      },
    })
    .input(rolloutIdInput)
    .output(rolloutGatesOutput)
    .query(({ ctx, input }) =>
      getRolloutGates(ctx.db, ctx.tenantDb, ctx.organization.id, input.id, ctx.mimirUrl),
    ),

  /**
   * Each site's budget use (issue 11, #4): its budget, what its uplink carries as measured at the
   * NATS link (current and peak rate, bytes), its nodes downloading and queued, its artifact cache.
   */
  siteUplinks: organizationProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/rollouts/{id}/site-uplinks",
        tags,
        summary: "Each site's uplink against the rollout's bandwidth budget, measured at the NATS link",
      },
    })
    .input(rolloutSiteUplinksInput)
    .output(rolloutSiteUplinksOutput)
    .query(({ ctx, input }) => getRolloutSiteUplinks(ctx.db, ctx.tenantDb, ctx.organization.id, input)),

  /** The nodes of a batch (or of the late joiners, or the rollback) with where each stands and why. */
  nodes: organizationProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/rollouts/{id}/nodes",
        tags,
        summary: "A rollout's nodes, by batch and outcome",
      },
    })
    .input(rolloutNodesInput)
    .output(rolloutNodesOutput)
    .query(({ ctx, input }) => listRolloutNodes(ctx.db, ctx.tenantDb, input)),

  start: action("start", "Start a pending rollout (freezes its plan)"),
  pause: action("pause", "Pause a running rollout"),
  resume: action("resume", "Resume a paused rollout, or go on past a failed batch"),
  approve: action("approve", "Approve the next batch"),
  abort: action("abort", "Abort a rollout (nodes stay on the version they run)"),
  rollback: action("rollback", "Roll every node the rollout touched back to its previous version"),
});
