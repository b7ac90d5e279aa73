/**
 * Rollouts: preview (dry run), create, list, detail for the live page, and people's actions.
 * The planning, deciding and transitions are the pure core's (@edgefleet/rollout); the storage
 * and the actions' persistence are @edgefleet/rollout-store's, which the gateway's controller
 * uses too, so a preview, an action here and a controller step can never disagree.
 */
import { type Db, Prisma, type Tx } from "@edgefleet/db";
import {
  actionAvailability,
  type BatchView,
  type ObservedNode,
  planRollout,
  ROLLOUT_ACTION_TYPES,
  type RolloutActionType,
  RolloutInputError,
  type RolloutPlan,
  type RolloutState,
  rolloutView,
  strategySiteIds,
} from "@edgefleet/rollout";
import {
  actOnRollout,
  type FleetNode,
  insertRollout,
  loadRolloutFleet,
  loadRolloutState,
  type PersonAction,
  RolloutStateError,
  type RolloutTarget,
  targetNodes,
} from "@edgefleet/rollout-store";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { rolloutPlanInput, rolloutTargetInput } from "../schemas/rollouts";
import type { TenantDb } from "./nodes";
import { type Actor, roleAtLeast } from "./roles";

/** Statuses in which a rollout still moves nodes: one per app and overlapping target at a time. */
export const ACTIVE_ROLLOUT_STATUSES = [
  "pending",
  "running",
  "paused",
  "awaiting_approval",
  "failed",
  "rolling_back",
] as const;

export { rolloutPlanInput, rolloutTargetInput };
export const rolloutIdInput = z.object({ id: z.uuid() });
export const rolloutNoteInput = z.object({ id: z.uuid(), note: z.string().trim().max(500).optional() });
export const listRolloutsInput = z.object({
  appId: z.uuid().optional(),
  status: z
    .enum([
      "pending",
      "running",
      "paused",
      "awaiting_approval",
      "failed",
      "completed",
      "cancelled",
      "rolling_back",
      "rolled_back",
    ])
    .optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** The last id of the previous page (ids are time-ordered). */
  cursor: z.uuid().optional(),
});

/** A refusal that names its input field, in the same shape as zod's input errors (REST `issues`). */
function fieldError(path: (string | number)[], message: string): never {
  throw new TRPCError({
    code: "BAD_REQUEST",
    message,
    cause: z
      .unknown()
      .superRefine((_value, ctx) => ctx.addIssue({ code: "custom", path, message }))
      .safeParse(null).error,
  });
}

// ---------------------------------------------------------------------------------------------
// Outputs

const tallySchema = z.object({
  nodes: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  timedOut: z.number().int(),
  failedOffline: z.number().int(),
  skippedOffline: z.number().int(),
  alreadyCurrent: z.number().int(),
  left: z.number().int(),
  inProgress: z.number().int(),
});

const planSiteName = z.object({ siteId: z.string().nullable(), siteName: z.string().nullable() });
const planSiteSchema = z.object({
  siteId: z.string().nullable(),
  siteName: z.string().nullable(),
  nodes: z.number().int(),
  offline: z.number().int(),
});

export const rolloutPreviewOutput = z.object({
  totals: z.object({
    target: z.number().int(),
    toUpdate: z.number().int(),
    alreadyCurrent: z.number().int(),
    offline: z.number().int(),
  }),
  batches: z.array(
    z.object({
      index: z.number().int(),
      source: z.string(),
      nodes: z.number().int(),
      pauseAfter: z.unknown(),
      successThreshold: z.number(),
      offline: z.string(),
      sites: z.array(planSiteSchema),
    }),
  ),
  sites: z.array(
    z.object({
      siteId: z.string().nullable(),
      siteName: z.string().nullable(),
      timeZone: z.string(),
      targetNodes: z.number().int(),
      toUpdate: z.number().int(),
      maxUpdating: z.number().int().nullable(),
      window: z.unknown(),
    }),
  ),
  warnings: z.array(z.object({ code: z.string(), message: z.string() })),
  /**
   * How the first batch (the canary) was chosen: a sample stratified across sites and hardware
   * labels, preferring online nodes of sites inside their window; null when the first batch took
   * every candidate or the strategy asked for the plain order.
   */
  canary: z
    .object({
      seed: z.string(),
      hardwareLabels: z.array(z.string()),
      strata: z.object({ total: z.number().int(), covered: z.number().int() }),
      sites: z.object({ total: z.number().int(), covered: z.number().int() }),
      hardware: z.object({ total: z.number().int(), covered: z.number().int() }),
      tiers: z.object({
        ready: z.number().int(),
        window_closed: z.number().int(),
        offline: z.number().int(),
      }),
      closedSites: z.array(planSiteName),
      uncovered: z.array(planSiteName.extend({ hardware: z.string(), candidates: z.number().int() })),
    })
    .nullable(),
});
export type RolloutPreview = z.infer<typeof rolloutPreviewOutput>;

export const rolloutSummary = z.object({
  id: z.string(),
  appId: z.string(),
  appName: z.string(),
  appVersionId: z.string(),
  version: z.string(),
  target: z.object({ selector: z.string(), siteIds: z.array(z.string()) }),
  status: z.string(),
  statusReason: z.string().nullable(),
  createdBy: z.string().nullable(),
  createdAt: z.date(),
  startedAt: z.date().nullable(),
  finishedAt: z.date().nullable(),
  updatedAt: z.date(),
});
export type RolloutSummary = z.infer<typeof rolloutSummary>;
export const listRolloutsOutput = z.object({
  items: z.array(rolloutSummary),
  nextCursor: z.string().nullable(),
});

const batchOutput = z.object({
  phase: z.enum(["forward", "rollback"]),
  index: z.number().int(),
  status: z.string(),
  startedAt: z.number().nullable(),
  finishedAt: z.number().nullable(),
  reason: z.string().nullable(),
  verdictTally: tallySchema.nullable(),
  liveTally: tallySchema,
  /** Nodes by where they stand (outcome: ready, updating, succeeded, failed, skipped_offline, …). */
  byOutcome: z.record(z.string(), z.number().int()),
  /** Nodes by what their agents report (pending, pulling, starting, running, failed, stopped, none). */
  byInstanceState: z.record(z.string(), z.number().int()),
  pulling: z.object({ nodes: z.number().int(), bytes: z.number(), totalBytes: z.number() }),
  caughtUp: z.number().int(),
});

const actionState = z.object({ allowed: z.boolean(), reason: z.string().nullable() });

export const rolloutDetailOutput = rolloutSummary.extend({
  strategy: z.unknown(),
  plan: rolloutPreviewOutput.nullable(),
  batches: z.array(batchOutput),
  lateJoiners: batchOutput.nullable(),
  rollback: z.array(batchOutput).nullable(),
  /** Why nothing moves now and until when (per site for windows and budgets). */
  waits: z.unknown(),
  /** Each action: possible now for this caller, or why not (status or role). */
  actions: z.record(z.string(), actionState),
  /**
   * The chart over time: cumulative nodes dispatched and running the version (from each node's
   * dispatch and the time its agent reported it running), and rolled back, at up to 60 instants
   * from the start to now.
   */
  timeline: z.array(
    z.object({
      at: z.number(),
      dispatched: z.number().int(),
      running: z.number().int(),
      rolledBack: z.number().int(),
    }),
  ),
  failures: z.array(
    z.object({
      nodeId: z.string(),
      nodeName: z.string(),
      phase: z.string(),
      batch: z.number().int().nullable(),
      reason: z.string().nullable(),
    }),
  ),
  events: z.array(
    z.object({
      id: z.string(),
      kind: z.string(),
      message: z.string(),
      actorType: z.string(),
      actorId: z.string().nullable(),
      at: z.date(),
    }),
  ),
});
export type RolloutDetail = z.infer<typeof rolloutDetailOutput>;

// ---------------------------------------------------------------------------------------------
// Validation shared by preview and create

interface ResolvedInput {
  version: { id: string; appId: string; appName: string; version: string; artifactState: string };
  target: RolloutTarget;
  fleet: FleetNode[];
}

async function resolveInput(
  db: Db,
  tenant: TenantDb,
  organizationId: string,
  input: z.output<typeof rolloutPlanInput>,
): Promise<ResolvedInput> {
  const version = await tenant.appVersion.findFirst({
    where: { id: input.appVersionId },
    select: { id: true, appId: true, version: true, artifactState: true, app: { select: { name: true } } },
  });
  if (!version)
    throw new TRPCError({ code: "NOT_FOUND", message: `app version ${input.appVersionId} not found` });
  const siteRefs = [
    ...input.target.siteIds.map((siteId, i) => ({
      siteId,
      path: ["target", "siteIds", i] as (string | number)[],
    })),
    ...strategySiteIds(input.strategy).map((s) => ({ siteId: s.siteId, path: ["strategy", ...s.path] })),
  ];
  if (siteRefs.length > 0) {
    const known = new Set(
      (
        await tenant.site.findMany({
          where: { id: { in: siteRefs.map((s) => s.siteId).filter(isUuid) } },
          select: { id: true },
        })
      ).map((s) => s.id),
    );
    const unknown = siteRefs.find((s) => !known.has(s.siteId));
    if (unknown) {
      throw new TRPCError({
        code: "NOT_FOUND",
        message: `${unknown.path.join(".")}: site ${unknown.siteId} not found`,
      });
    }
  }
  const target: RolloutTarget = {
    organizationId,
    appId: version.appId,
    selector: input.target.selector,
    siteIds: input.target.siteIds,
  };
  const fleet = await loadRolloutFleet(db, target, null);
  if (!fleet.some((n) => n.inTarget)) {
    fieldError(["target"], "the target matches no enrolled node: check the selector and the sites");
  }
  return {
    version: { ...version, appName: version.app.name },
    target,
    fleet,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (id: string) => UUID.test(id);

function plan(input: z.output<typeof rolloutPlanInput>, fleet: FleetNode[], now: number): RolloutPlan {
  try {
    return planRollout({
      nodes: targetNodes(fleet),
      strategy: input.strategy,
      targetVersionId: input.appVersionId,
      now,
    });
  } catch (error) {
    if (error instanceof RolloutInputError) fieldError(["target", ...error.path], error.reason);
    throw error;
  }
}

async function siteNames(tenant: TenantDb, plan: RolloutPlan): Promise<Map<string, string>> {
  const ids = plan.sites.map((s) => s.siteId).filter((id): id is string => id !== null);
  const sites = await tenant.site.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } });
  return new Map(sites.map((s) => [s.id, s.name]));
}

function previewOf(plan: RolloutPlan, names: Map<string, string>): RolloutPreview {
  const name = (id: string | null) => (id === null ? null : (names.get(id) ?? null));
  return {
    totals: plan.totals,
    batches: plan.batches.map((b) => ({
      index: b.index,
      source: b.source.kind === "remainder" ? "remainder" : `${b.source.kind} (step ${b.source.step + 1})`,
      nodes: b.nodeIds.length,
      pauseAfter: b.policy.pauseAfter,
      successThreshold: b.policy.successThreshold,
      offline: b.policy.offline,
      sites: b.sites.map((s) => ({
        siteId: s.siteId,
        siteName: name(s.siteId),
        nodes: s.nodes,
        offline: s.offline,
      })),
    })),
    sites: plan.sites.map((s) => ({
      siteId: s.siteId,
      siteName: name(s.siteId),
      timeZone: s.timeZone,
      targetNodes: s.targetNodes,
      toUpdate: s.toUpdate,
      maxUpdating: s.maxUpdating,
      window: s.windowNow,
    })),
    warnings: plan.warnings.map((w) => ({ code: w.code, message: w.message })),
    canary: plan.canary
      ? {
          ...plan.canary,
          closedSites: plan.canary.closedSites.map((siteId) => ({ siteId, siteName: name(siteId) })),
          uncovered: plan.canary.uncovered.map((u) => ({ ...u, siteName: name(u.siteId) })),
        }
      : null,
  };
}

/** Dry run: the batches the rollout would have if started now (the planner the controller uses). */
export async function previewRollout(
  db: Db,
  tenant: TenantDb,
  organizationId: string,
  input: z.output<typeof rolloutPlanInput>,
): Promise<RolloutPreview> {
  const { fleet } = await resolveInput(db, tenant, organizationId, input);
  const planned = plan(input, fleet, Date.now());
  return previewOf(planned, await siteNames(tenant, planned));
}

/**
 * Creates a pending rollout. Refused: a version whose artifact is not ready, a target matching
 * nothing, and a target overlapping that of another active rollout of the same app (CONFLICT
 * naming it). Creations for one app are serialized (advisory lock) so two cannot both pass.
 */
export async function createRollout(
  db: Db,
  tenant: TenantDb,
  organizationId: string,
  actor: Actor,
  input: z.output<typeof rolloutPlanInput>,
): Promise<RolloutSummary> {
  const resolved = await resolveInput(db, tenant, organizationId, input);
  if (resolved.version.artifactState !== "ready") {
    fieldError(
      ["appVersionId"],
      `version ${resolved.version.version} cannot be rolled out: its artifact is ${resolved.version.artifactState}${resolved.version.artifactState === "pending" ? " (upload or import not finished)" : ""}`,
    );
  }
  plan(input, resolved.fleet, Date.now()); // the same checks the start will meet
  await db.$executeRaw(
    Prisma.sql`SELECT pg_advisory_xact_lock(hashtext(${`rollout-app:${resolved.version.appId}`}))`,
  );
  const active = await tenant.rollout.findMany({
    where: { appId: resolved.version.appId, status: { in: [...ACTIVE_ROLLOUT_STATUSES] } },
    select: { id: true, selector: true, siteIds: true, status: true },
  });
  const ours = new Set(resolved.fleet.filter((n) => n.inTarget).map((n) => n.id));
  for (const other of active) {
    const theirs = await loadRolloutFleet(
      db,
      { ...resolved.target, selector: other.selector, siteIds: other.siteIds },
      other.id,
    );
    const shared = theirs.filter((n) => n.inTarget && ours.has(n.id)).length;
    if (shared > 0) {
      throw new TRPCError({
        code: "CONFLICT",
        message: `rollout ${other.id} of this app is ${other.status} and targets ${shared} of the same node${shared === 1 ? "" : "s"}: finish, abort or roll it back first`,
      });
    }
  }
  const id = await insertRollout(db as unknown as Tx, {
    organizationId,
    appId: resolved.version.appId,
    appVersionId: input.appVersionId,
    selector: input.target.selector,
    siteIds: input.target.siteIds,
    strategy: input.strategy,
    versionLabel: resolved.version.version,
    actor: { type: actor.type, id: actor.id },
  });
  return getRolloutSummary(tenant, id);
}

// ---------------------------------------------------------------------------------------------
// Reads

const summarySelect = {
  id: true,
  appId: true,
  appVersionId: true,
  selector: true,
  siteIds: true,
  status: true,
  statusReason: true,
  createdBy: true,
  createdAt: true,
  startedAt: true,
  finishedAt: true,
  updatedAt: true,
  app: { select: { name: true } },
  appVersion: { select: { version: true } },
} as const;

type SummaryRow = Prisma.RolloutGetPayload<{ select: typeof summarySelect }>;

function summaryOf(row: SummaryRow): RolloutSummary {
  const { app, appVersion, selector, siteIds, ...rest } = row;
  return { ...rest, appName: app.name, version: appVersion.version, target: { selector, siteIds } };
}

export async function getRolloutSummary(tenant: TenantDb, id: string): Promise<RolloutSummary> {
  const row = await tenant.rollout.findFirst({ where: { id }, select: summarySelect });
  if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `rollout ${id} not found` });
  return summaryOf(row);
}

export async function listRollouts(tenant: TenantDb, input: z.output<typeof listRolloutsInput>) {
  const rows = await tenant.rollout.findMany({
    where: {
      ...(input.appId ? { appId: input.appId } : {}),
      ...(input.status ? { status: input.status } : {}),
      ...(input.cursor ? { id: { lt: input.cursor } } : {}),
    },
    orderBy: { id: "desc" },
    take: input.limit + 1,
    select: summarySelect,
  });
  const page = rows.slice(0, input.limit);
  return {
    items: page.map(summaryOf),
    nextCursor: rows.length > input.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

function batchOutputOf(view: BatchView, byId: Map<string, FleetNode>): z.infer<typeof batchOutput> {
  const byOutcome: Record<string, number> = {};
  const byInstanceState: Record<string, number> = {};
  const pulling = { nodes: 0, bytes: 0, totalBytes: 0 };
  let caughtUp = 0;
  for (const node of view.nodes) {
    byOutcome[node.outcome] = (byOutcome[node.outcome] ?? 0) + 1;
    const state = node.instanceState ?? "none";
    byInstanceState[state] = (byInstanceState[state] ?? 0) + 1;
    if (node.caughtUp) caughtUp++;
    const fleetNode = byId.get(node.nodeId);
    if (state === "pulling" && fleetNode) {
      pulling.nodes++;
      pulling.bytes += fleetNode.pulledBytes ?? 0;
      pulling.totalBytes += fleetNode.totalBytes ?? 0;
    }
  }
  const { nodes: _nodes, ...rest } = view;
  return { ...rest, byOutcome, byInstanceState, pulling, caughtUp };
}

const ROLE_FOR_ACTIONS = "operator" as const;

/** The live page's data: per batch counts by state, pulling bytes, failures, waits, actions, events. */
export async function getRolloutDetail(
  db: Db,
  tenant: TenantDb,
  actor: Actor,
  id: string,
): Promise<RolloutDetail> {
  const row = await tenant.rollout.findFirst({
    where: { id },
    select: {
      ...summarySelect,
      organizationId: true,
      strategy: true,
      state: true,
      waits: true,
      stateVersion: true,
      leaseOwner: true,
      leaseUntil: true,
    },
  });
  if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `rollout ${id} not found` });
  const summary = summaryOf(row);
  const stored = {
    id: row.id,
    organizationId: row.organizationId,
    appId: row.appId,
    appVersionId: row.appVersionId,
    selector: row.selector,
    siteIds: row.siteIds,
    status: row.status,
    state: row.state,
    stateVersion: row.stateVersion,
    leaseOwner: row.leaseOwner,
    leaseUntil: row.leaseUntil,
  };
  let state: RolloutState | null = null;
  try {
    state = await loadRolloutState(db, stored);
  } catch {
    state = null; // seeded history without per-node records: summary only
  }
  const fleet = state ? await loadRolloutFleet(db, stored, row.id) : [];
  const byId = new Map(fleet.map((n) => [n.id, n]));
  const now = Date.now();
  const view = state ? rolloutView(state, fleet as ObservedNode[], now) : null;
  const planned = state?.plan ?? null;

  const mayAct = roleAtLeast(actor.role, ROLE_FOR_ACTIONS);
  const availability = state ? actionAvailability(state) : null;
  const actions: Record<string, { allowed: boolean; reason: string | null }> = {};
  for (const action of ROLLOUT_ACTION_TYPES as readonly RolloutActionType[]) {
    const byStatus = availability?.[action] ?? {
      allowed: false,
      reason: "this rollout has no controller state (seeded)",
    };
    actions[action] = !mayAct
      ? { allowed: false, reason: `needs the ${ROLE_FOR_ACTIONS} role; you are ${actor.role}` }
      : byStatus.allowed
        ? { allowed: true, reason: null }
        : { allowed: false, reason: byStatus.reason };
  }

  const failures: RolloutDetail["failures"] = [];
  const failed = new Set(["failed", "timed_out", "failed_offline"]);
  for (const batch of [...(view?.batches ?? []), ...(view?.rollback ?? [])]) {
    for (const node of batch.nodes) {
      if (failures.length >= 100 || !failed.has(node.outcome)) continue;
      const fleetNode = byId.get(node.nodeId);
      failures.push({
        nodeId: node.nodeId,
        nodeName: fleetNode?.name ?? node.nodeId,
        phase: batch.phase,
        batch: batch.index,
        reason:
          node.outcome === "timed_out"
            ? "did not reach running within the batch's timeout"
            : node.outcome === "failed_offline"
              ? "offline (the batch's offline policy counts it as failed)"
              : (fleetNode?.instance?.reason ?? null),
      });
    }
  }

  const events = await tenant.rolloutEvent.findMany({
    where: { rolloutId: id },
    orderBy: { id: "desc" },
    take: 200,
    select: { id: true, kind: true, message: true, actorType: true, actorId: true, at: true },
  });

  return {
    ...summary,
    strategy: row.strategy,
    plan: planned ? previewOf(planned, await siteNames(tenant, planned)) : null,
    batches: view?.batches.map((b) => batchOutputOf(b, byId)) ?? [],
    lateJoiners: view
      ? batchOutputOf(
          {
            phase: "forward",
            index: -1,
            status: "running",
            startedAt: null,
            finishedAt: null,
            reason: null,
            verdictTally: null,
            liveTally: {
              nodes: view.lateJoiners.length,
              succeeded: 0,
              failed: 0,
              timedOut: 0,
              failedOffline: 0,
              skippedOffline: 0,
              alreadyCurrent: 0,
              left: 0,
              inProgress: 0,
            },
            nodes: view.lateJoiners,
          },
          byId,
        )
      : null,
    rollback: view?.rollback?.map((b) => batchOutputOf(b, byId)) ?? null,
    waits: row.waits,
    timeline: state ? timelineOf(state, byId, now) : [],
    actions,
    failures,
    events: events.map((e) => ({ ...e, id: e.id.toString() })),
  };
}

const TIMELINE_POINTS = 60;

function timelineOf(
  state: RolloutState,
  byId: Map<string, FleetNode>,
  now: number,
): RolloutDetail["timeline"] {
  const dispatched = state.dispatches.map((d) => d.dispatchedAt).sort((a, b) => a - b);
  if (dispatched.length === 0) return [];
  const running: number[] = [];
  for (const d of state.dispatches) {
    const node = byId.get(d.nodeId);
    if (node?.currentVersionId === d.toVersionId && node.instance?.state === "running") {
      running.push(Math.max(node.instance.since, d.dispatchedAt));
    }
  }
  running.sort((a, b) => a - b);
  const rolledBack = (state.rollback?.dispatches ?? []).map((d) => d.dispatchedAt).sort((a, b) => a - b);
  const start = dispatched[0] as number;
  const step = Math.max(1_000, Math.ceil((now - start) / (TIMELINE_POINTS - 1)));
  const upTo = (sorted: number[], at: number) => {
    let count = 0;
    while (count < sorted.length && (sorted[count] as number) <= at) count++;
    return count;
  };
  const points: RolloutDetail["timeline"] = [];
  for (let at = start; ; at += step) {
    const t = Math.min(at, now);
    points.push({
      at: t,
      dispatched: upTo(dispatched, t),
      running: upTo(running, t),
      rolledBack: upTo(rolledBack, t),
    });
    if (t >= now) break;
  }
  return points;
}

export const rolloutNodesInput = z.object({
  id: z.uuid(),
  phase: z.enum(["forward", "rollback", "late"]).default("forward"),
  /** Batch index (forward or rollback); absent: every batch of the phase. */
  batch: z.coerce.number().int().min(0).max(1000).optional(),
  outcome: z.string().max(40).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

export const rolloutNodesOutput = z.object({
  total: z.number().int(),
  items: z.array(
    z.object({
      nodeId: z.string(),
      nodeName: z.string().nullable(),
      siteId: z.string().nullable(),
      phase: z.string(),
      batch: z.number().int().nullable(),
      outcome: z.string(),
      instanceState: z.string().nullable(),
      reason: z.string().nullable(),
      online: z.boolean(),
      caughtUp: z.boolean(),
      pulledBytes: z.number().nullable(),
      totalBytes: z.number().nullable(),
    }),
  ),
});

/** The nodes of a rollout (one batch, one outcome) as the page lists them, with each one's reason. */
export async function listRolloutNodes(
  db: Db,
  tenant: TenantDb,
  input: z.output<typeof rolloutNodesInput>,
): Promise<z.infer<typeof rolloutNodesOutput>> {
  const row = await tenant.rollout.findFirst({
    where: { id: input.id },
    select: {
      id: true,
      organizationId: true,
      appId: true,
      appVersionId: true,
      selector: true,
      siteIds: true,
      status: true,
      state: true,
      stateVersion: true,
      leaseOwner: true,
      leaseUntil: true,
    },
  });
  if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `rollout ${input.id} not found` });
  let state: RolloutState;
  try {
    state = await loadRolloutState(db, row);
  } catch {
    return { total: 0, items: [] };
  }
  const fleet = await loadRolloutFleet(db, row, row.id);
  const byId = new Map(fleet.map((n) => [n.id, n]));
  const view = rolloutView(state, fleet as ObservedNode[], Date.now());
  const batches: BatchView[] =
    input.phase === "forward"
      ? view.batches
      : input.phase === "rollback"
        ? (view.rollback ?? [])
        : [{ ...(view.batches[0] as BatchView), index: -1, nodes: view.lateJoiners }];
  const rows = batches
    .filter((b) => input.phase === "late" || input.batch === undefined || b.index === input.batch)
    .flatMap((b) => b.nodes.map((n) => ({ batch: input.phase === "late" ? null : b.index, n })))
    .filter(({ n }) => input.outcome === undefined || n.outcome === input.outcome);
  return {
    total: rows.length,
    items: rows.slice(input.offset, input.offset + input.limit).map(({ batch, n }) => {
      const node = byId.get(n.nodeId);
      return {
        nodeId: n.nodeId,
        nodeName: node?.name ?? null,
        siteId: node?.siteId ?? null,
        phase: input.phase,
        batch,
        outcome: n.outcome,
        instanceState: n.instanceState,
        reason: node?.instance?.reason ?? null,
        online: n.online,
        caughtUp: n.caughtUp,
        pulledBytes: node?.pulledBytes ?? null,
        totalBytes: node?.totalBytes ?? null,
      };
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// Actions

/** Runs a person's action; NOT_FOUND for an unknown or foreign id, CONFLICT (with the why) when the status forbids it. */
export async function actOn(
  db: Db,
  organizationId: string,
  actor: Actor,
  id: string,
  action: PersonAction,
): Promise<{ before: string; after: string }> {
  let outcome: Awaited<ReturnType<typeof actOnRollout>>;
  try {
    outcome = await actOnRollout(db as unknown as Tx, organizationId, id, action, {
      type: actor.type,
      id: actor.id,
    });
  } catch (error) {
    if (error instanceof RolloutStateError)
      throw new TRPCError({ code: "CONFLICT", message: `cannot ${action.type}: ${error.message}` });
    throw error;
  }
  if (!outcome.ok) {
    if (outcome.reason === "not_found")
      throw new TRPCError({ code: "NOT_FOUND", message: `rollout ${id} not found` });
    throw new TRPCError({ code: "CONFLICT", message: outcome.refusal.message });
  }
  return { before: outcome.before.status, after: outcome.after.status };
}
