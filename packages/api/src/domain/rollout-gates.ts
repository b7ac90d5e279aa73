/**
 * Metric gates through the API (issue 11): checking a strategy's PromQL against Mimir before a
 * rollout exists, and each batch's gates with their verdict, numbers and series for the rollout
 * page. The judging itself is the controller's (@edgefleet/rollout-store's judgeDueGates), with
 * the pure judge of @edgefleet/rollout.
 */

import type { Db } from "@edgefleet/db";
import {
  expandCustomPromql,
  foreignOrganizationMatcher,
  type Gate,
  gateActionsOf,
  gatesWindowEnd,
  isRolloutStateDocument,
  MAX_GATE_WINDOW_SECONDS,
  MAX_PROMQL_LENGTH,
  MIN_GATE_WINDOW_SECONDS,
  type RolloutStrategy,
  rolloutStrategySchema,
} from "@edgefleet/rollout";
import {
  type LiveGateCharts,
  liveGateCharts,
  loadGateVerdicts,
  MimirUnavailableError,
  PromqlError,
  queryVector,
} from "@edgefleet/rollout-store";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import type { TenantDb } from "./nodes";

type Path = (string | number)[];

/** A refusal that names its input field (zod's issue shape, as the REST `issues`). */
function fieldError(path: Path, message: string): never {
  throw new TRPCError({
    code: "BAD_REQUEST",
    message: `${path.join(".")}: ${message}`,
    cause: z
      .unknown()
      .superRefine((_value, ctx) => ctx.addIssue({ code: "custom", path, message }))
      .safeParse(null).error,
  });
}

/** Every gate of a strategy with the path of its input field. */
function gatesWithPaths(strategy: RolloutStrategy): Array<{ gate: Gate; path: Path }> {
  const found: Array<{ gate: Gate; path: Path }> = [];
  strategy.defaults.gates.forEach((gate, j) => {
    found.push({ gate, path: ["strategy", "defaults", "gates", j] });
  });
  strategy.batches.forEach((batch, i) => {
    (batch.gates ?? []).forEach((gate, j) => {
      found.push({ gate, path: ["strategy", "batches", i, "gates", j] });
    });
  });
  return found;
}

/**
 * Checks each gate's operator PromQL before the rollout is created: it must not name another
 * organization, must parse, and must give an instant vector, run against Mimir as the
 * organization (the tenant is never a parameter). A failure is a 400 naming the field
 * (`strategy.batches.0.gates.1.metric.promql`); Mimir being down is a 500 that says so.
 */
export async function checkGateQueries(
  mimirUrl: string | null,
  organizationId: string,
  strategy: RolloutStrategy,
): Promise<void> {
  const custom = gatesWithPaths(strategy).filter(({ gate }) => "promql" in gate.metric);
  if (custom.length === 0) return;
  if (!mimirUrl) {
    throw new TRPCError({
      code: "INTERNAL_SERVER_ERROR",
      message: "the metrics store is not configured: gates with PromQL cannot be checked",
    });
  }
  for (const { gate, path } of custom) {
    if (!("promql" in gate.metric)) continue;
    const field = [...path, "metric", "promql"];
    const foreign = foreignOrganizationMatcher(gate.metric.promql, organizationId);
    if (foreign !== null) {
      fieldError(
        field,
        `names organization ${JSON.stringify(foreign)}: a gate reads its rollout's organization only (leave org out)`,
      );
    }
    try {
      await queryVector(
        { url: mimirUrl },
        organizationId,
        expandCustomPromql(gate.metric.promql, gate.windowSeconds),
        Date.now(),
      );
    } catch (error) {
      if (error instanceof PromqlError) fieldError(field, `Mimir refused the query: ${error.message}`);
      if (error instanceof MimirUnavailableError) {
        throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: error.message, cause: error });
      }
      throw error;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// rollout.checkGateQuery: the console's PromQL editor, before the rollout can start

export const checkGateQueryInput = z.object({
  /** Operator PromQL giving one value per node (a `node` label); `$window` is the window. */
  promql: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(MAX_PROMQL_LENGTH, `must be at most ${MAX_PROMQL_LENGTH} characters`),
  windowSeconds: z.int().min(MIN_GATE_WINDOW_SECONDS).max(MAX_GATE_WINDOW_SECONDS).default(300),
});

export const checkGateQueryOutput = z.object({
  /** The query as Mimir ran it (`$window` filled in). */
  query: z.string(),
  /** Series it returns now, and how many distinct nodes they name. */
  series: z.number().int(),
  nodes: z.number().int(),
  /** Series without a `node` label: a gate ignores them. */
  withoutNode: z.number().int(),
});

/**
 * Runs one gate's PromQL against Mimir as the organization (the tenant is the caller's
 * organization, never a parameter): a query that does not parse, gives no instant vector, or
 * names another organization is a 400 naming `promql`.
 */
export async function checkGateQuery(
  mimirUrl: string | null,
  organizationId: string,
  input: z.output<typeof checkGateQueryInput>,
): Promise<z.infer<typeof checkGateQueryOutput>> {
  if (!mimirUrl) {
    throw new TRPCError({
      code: "INTERNAL_SERVER_ERROR",
      message: "the metrics store is not configured: PromQL cannot be checked",
    });
  }
  const foreign = foreignOrganizationMatcher(input.promql, organizationId);
  if (foreign !== null) {
    fieldError(
      ["promql"],
      `names organization ${JSON.stringify(foreign)}: a gate reads its rollout's organization only (leave org out)`,
    );
  }
  const query = expandCustomPromql(input.promql, input.windowSeconds);
  try {
    const series = await queryVector({ url: mimirUrl }, organizationId, query, Date.now());
    const nodes = new Set(series.map((s) => s.labels.node).filter((n) => n !== undefined));
    return {
      query,
      series: series.length,
      nodes: nodes.size,
      withoutNode: series.filter((s) => s.labels.node === undefined).length,
    };
  } catch (error) {
    if (error instanceof PromqlError) fieldError(["promql"], `Mimir refused the query: ${error.message}`);
    if (error instanceof MimirUnavailableError) {
      throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: error.message, cause: error });
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// rollout.gates

const summary = z.object({
  nodes: z.number().int(),
  median: z.number().nullable(),
  mean: z.number().nullable(),
  min: z.number().nullable(),
  max: z.number().nullable(),
});
const sample = z.object({ nodeId: z.string(), value: z.number() });
const point = z.tuple([z.number(), z.number()]);

export const gateVerdictOutput = z.object({
  gate: z.string(),
  critical: z.boolean(),
  outcome: z.enum(["pass", "fail", "inconclusive", "no_data"]),
  reason: z.string(),
  canary: summary,
  baseline: summary,
  threshold: z
    .object({
      min: z.number().nullable(),
      max: z.number().nullable(),
      breaching: z.array(z.string()),
      failureLimit: z.number().int(),
    })
    .optional(),
  compare: z
    .object({
      worse: z.string(),
      u: z.number(),
      z: z.number(),
      pValue: z.number(),
      alpha: z.number(),
      delta: z.number(),
      relativeDelta: z.number().nullable(),
      tolerance: z.number(),
      minDelta: z.number(),
    })
    .optional(),
  queries: z.object({ canary: z.string(), baseline: z.string() }),
  samples: z.object({ canary: z.array(sample), baseline: z.array(sample) }),
  chart: z.object({ stepSeconds: z.number(), canary: z.array(point), baseline: z.array(point) }),
});

export const rolloutGatesOutput = z.object({
  rolloutId: z.string(),
  /** What a batch's outcome does: fail → rollback | pause; inconclusive → pause | continue | rollback. */
  actions: z.object({ onFail: z.string(), onInconclusive: z.string() }),
  batches: z.array(
    z.object({
      batch: z.number().int(),
      /** The gates as the plan froze them (defaults filled in). */
      gates: z.array(z.unknown()),
      /**
       * `not_started`: the batch has not run yet; `watching`: its nodes run the version and the
       * window is open until `windowEnd`; `judging`: the window is over, the controller judges it
       * now; `judged`: the verdict is in; `not_judged`: the batch failed on install (no verdict).
       */
      state: z.enum(["not_started", "installing", "watching", "judging", "judged", "not_judged"]),
      windowStart: z.date().nullable(),
      windowEnd: z.date().nullable(),
      outcome: z.enum(["pass", "fail", "inconclusive"]).nullable(),
      reason: z.string().nullable(),
      evaluatedAt: z.date().nullable(),
      /** The baseline cohort: its size and how well it matched the canary's sites and hardware. */
      baseline: z
        .object({
          nodes: z.number().int(),
          match: z.object({
            siteAndHardware: z.number().int(),
            hardware: z.number().int(),
            site: z.number().int(),
            other: z.number().int(),
          }),
        })
        .nullable(),
      verdicts: z.array(gateVerdictOutput),
      /**
       * While the window is open (or the batch is being judged): each gate's canary-vs-baseline
       * chart so far, the same cohorts and series as the verdict's; null otherwise, or without Mimir.
       */
      live: z
        .object({
          asOf: z.date(),
          canaryNodes: z.number().int(),
          baselineNodes: z.number().int(),
          charts: z.array(
            z.object({
              gate: z.string(),
              stepSeconds: z.number(),
              canary: z.array(point),
              baseline: z.array(point),
              /** Mimir refused the query (the verdict will say the same). */
              error: z.string().nullable(),
            }),
          ),
        })
        .nullable(),
    }),
  ),
});
export type RolloutGates = z.infer<typeof rolloutGatesOutput>;

/** Each batch that has gates: where its judging stands, and the verdict with its evidence. */
export async function getRolloutGates(
  db: Db,
  tenant: TenantDb,
  organizationId: string,
  id: string,
  mimirUrl: string | null = null,
): Promise<RolloutGates> {
  const row = await tenant.rollout.findFirst({
    where: { id },
    select: { id: true, strategy: true, state: true },
  });
  if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `rollout ${id} not found` });
  const strategy = rolloutStrategySchema.safeParse(row.strategy);
  const actions = gateActionsOf(strategy.success ? strategy.data : {});
  const document = isRolloutStateDocument(row.state) ? row.state : null;
  // The tenant-scoped client found the row; the verdicts are read for that organization only.
  const verdicts = new Map((await loadGateVerdicts(db, organizationId, row.id)).map((v) => [v.batch, v]));
  const now = Date.now();
  const batches: RolloutGates["batches"] = [];
  for (const planned of document?.plan?.batches ?? []) {
    const gates = planned.policy.gates;
    if (gates.length === 0) continue;
    const progress = document?.batches[planned.index];
    const stored = verdicts.get(planned.index);
    const end = progress ? gatesWindowEnd(progress, gates) : null;
    const state: RolloutGates["batches"][number]["state"] = stored
      ? "judged"
      : !progress
        ? "not_started"
        : progress.finishedAt === null
          ? "installing"
          : progress.verdict !== "succeeded"
            ? "not_judged"
            : end !== null && now < end
              ? "watching"
              : "judging";
    batches.push({
      batch: planned.index,
      gates,
      state,
      windowStart: stored?.windowStart ?? (progress?.finishedAt ? new Date(progress.finishedAt) : null),
      windowEnd: stored?.windowEnd ?? (end !== null ? new Date(end) : null),
      outcome: stored ? (stored.outcome as "pass" | "fail" | "inconclusive") : null,
      reason: stored?.reason ?? null,
      evaluatedAt: stored?.evaluatedAt ?? null,
      baseline: stored ? { nodes: stored.baseline.nodeIds.length, match: stored.baseline.match } : null,
      verdicts: stored?.gates ?? [],
      live:
        (state === "watching" || state === "judging") && mimirUrl
          ? await liveCharts(db, organizationId, row.id, planned.index, mimirUrl)
          : null,
    });
  }
  return { rolloutId: row.id, actions, batches };
}

/** Live charts are read from Mimir at most this often per rollout (every viewer polls every 2 s). */
const LIVE_CHARTS_FOR_MS = 10_000;
const liveChartsRead = new Map<string, { at: number; charts: Promise<LiveGateCharts | null> }>();

/**
 * The watched batch's charts so far (liveGateCharts), shared by this process's viewers for a few
 * seconds. The rollout was found through the tenant-scoped client: the key is its own id.
 */
async function liveCharts(
  db: Db,
  organizationId: string,
  rolloutId: string,
  batch: number,
  mimirUrl: string,
): Promise<RolloutGates["batches"][number]["live"]> {
  const now = Date.now();
  const key = `${rolloutId}/${batch}`;
  let read = liveChartsRead.get(key);
  if (!read || now - read.at > LIVE_CHARTS_FOR_MS) {
    read = {
      at: now,
      charts: liveGateCharts(db, organizationId, rolloutId, { mimir: { url: mimirUrl } }).catch((error) => {
        // Mimir down: no live chart now (the page says so); the verdict still waits for Mimir.
        if (error instanceof MimirUnavailableError) return null;
        throw error;
      }),
    };
    for (const [stale, entry] of liveChartsRead)
      if (now - entry.at > LIVE_CHARTS_FOR_MS) liveChartsRead.delete(stale);
    liveChartsRead.set(key, read);
  }
  const charts = await read.charts;
  if (!charts || charts.batch !== batch) return null;
  return {
    asOf: new Date(charts.asOf),
    canaryNodes: charts.canaryNodes,
    baselineNodes: charts.baselineNodes,
    charts: charts.gates.map(({ gate, chart, error }) => ({ gate, ...chart, error })),
  };
}
