/**
 * Judging a batch's metric gates (issue 11): the I/O shell around @edgefleet/rollout's pure judge.
 * When the core says a batch's gates are due (`gatesDue`: the batch's nodes all run the version
 * and the longest window is over), this reads the canary (the batch's nodes) and a baseline
 * cohort (`chooseBaseline`: comparable nodes on another version) from Postgres, their per-node
 * values from Mimir (tenant = the rollout's organization), judges every gate, and records, in
 * one transaction under the rollout's lock and lease, the verdict row with its numbers and
 * series and the outcome in the rollout's state. The next controller step acts on it (continue,
 * pause or roll back). Crash-safe: nothing is written until the last transaction, which
 * re-checks that the batch still awaits its verdict; a crash before it just judges again.
 */
import { type Db, Prisma, type Tx } from "@edgefleet/db";
import {
  awaitsGates,
  type Baseline,
  type BatchGateResult,
  type BatchProgress,
  batchGates,
  type CohortNode,
  type CohortSelector,
  chooseBaseline,
  type DueGates,
  freshnessQuery,
  type Gate,
  type GateVerdict,
  gateQuery,
  gatesDue,
  gatesWindowEnd,
  judgeBatch,
  judgeGate,
  type NodeSample,
  type RolloutState,
  recordGateResult,
} from "@edgefleet/rollout";
import { type MimirReader, PromqlError, queryMatrix, queryVector } from "./mimir";
import {
  insertEvents,
  loadRolloutState,
  lockRollout,
  type RolloutRow,
  readRollout,
  saveRolloutState,
} from "./store";

/** The series behind one gate's verdict: each cohort's mean per node over time. */
export interface GateChart {
  stepSeconds: number;
  canary: Array<[number, number]>;
  baseline: Array<[number, number]>;
}

/** One gate as stored in `rollout_gate_verdict.gates`. */
export interface StoredGateVerdict extends GateVerdict {
  /** The PromQL run for each cohort (for a person to re-run it). */
  queries: { canary: string; baseline: string };
  /** The per-node values the judge compared. */
  samples: { canary: NodeSample[]; baseline: NodeSample[] };
  chart: GateChart;
}

export interface GateJudgement {
  rolloutId: string;
  batch: number;
  result: BatchGateResult;
  gates: StoredGateVerdict[];
  baseline: Baseline;
}

export interface JudgeGatesOptions {
  /** The replica's lease id: nothing is recorded unless it still holds the rollout. */
  owner?: string;
  /** Mimir; without it every gate is inconclusive (never a silent pass). */
  mimir: MimirReader | null;
  now?: () => number;
  /**
   * How long past the window's end a verdict waits for the canary's samples to reach Mimir
   * (DEFAULT_FRESHNESS_GRACE_MS); then it judges on what is there.
   */
  freshnessGraceMs?: number;
}

/** A verdict waits at most this long past the window's end for the canary's samples. */
export const DEFAULT_FRESHNESS_GRACE_MS = 60_000;

/** Share of the canary's nodes whose samples must have reached the window's end. */
const CAUGHT_UP_SHARE = 0.9;

/** The baseline's seed: its own sample of the fleet per rollout and batch, the same for the judge and the live chart. */
function baselineSeed(rolloutId: string, batch: number): string {
  return `${rolloutId}:${batch}`;
}

/**
 * Whether Mimir holds, for at least 90 % of the canary's nodes, a node sample at or after the
 * window's end (every report carries the node series, whatever its apps do). A node that went
 * offline never catches up: the share and the grace keep it from holding the verdict forever.
 */
async function canaryCaughtUp(
  mimir: MimirReader,
  tenant: string,
  canaryIds: readonly string[],
  windowEnd: number,
  now: number,
): Promise<boolean> {
  if (canaryIds.length === 0) return true;
  try {
    const newest = await queryVector(mimir, tenant, freshnessQuery(canaryIds), now);
    const wanted = new Set(canaryIds);
    const caughtUp = newest.filter(
      (s) => s.labels.node !== undefined && wanted.has(s.labels.node) && s.value * 1000 >= windowEnd,
    ).length;
    return caughtUp >= Math.ceil(CAUGHT_UP_SHARE * canaryIds.length);
  } catch (error) {
    // A query Mimir refuses cannot become fresher: judge now (the gate's own query will say why).
    if (error instanceof PromqlError) return true;
    throw error;
  }
}

/** Points a chart aims for over a window. */
const CHART_POINTS = 60;

/**
 * Judges the rollout's due gates, if any, and records the verdict. Returns null when nothing is
 * due (or another replica holds the rollout). Mimir being unreachable throws
 * (MimirUnavailableError): the controller tries again at its next tick.
 */
export async function judgeDueGates(
  db: Db,
  rolloutId: string,
  options: JudgeGatesOptions,
): Promise<GateJudgement | null> {
  const now = options.now?.() ?? Date.now();
  const prepared = await db.$transaction(async (tx) => {
    const row = await lockRollout(tx, rolloutId);
    if (!row || (options.owner !== undefined && !(await holdsLease(tx, row.id, options.owner)))) return null;
    const state = await loadRolloutState(tx, row).catch(() => null);
    const due = state ? gatesDue(state, now) : null;
    if (!state || !due) return null;
    return { row, state, due, context: await cohortContext(tx, row, state, due) };
  });
  if (!prepared) return null;
  const { row, due, context } = prepared;

  // Judged only once the canary's samples of the window's end are in Mimir (or the grace is
  // over): a verdict on a window whose last part has not arrived yet would read a lagging ingest
  // as "no data", or judge on fewer samples than the window holds.
  const graceMs = options.freshnessGraceMs ?? DEFAULT_FRESHNESS_GRACE_MS;
  if (options.mimir && now < due.windowEnd + graceMs) {
    const caughtUp = await canaryCaughtUp(
      options.mimir,
      row.organizationId,
      context.canary.map((n) => n.id),
      due.windowEnd,
      now,
    );
    if (!caughtUp) return null;
  }
  const baseline = chooseBaseline({
    canary: context.canary,
    candidates: context.candidates,
    seed: baselineSeed(row.id, due.batch),
  });
  const gates: StoredGateVerdict[] = [];
  for (const gate of due.gates) {
    gates.push(await judgeOne(options.mimir, row.organizationId, gate, due, context, baseline.nodeIds));
  }
  const batchVerdict = judgeBatch(gates);
  const result: BatchGateResult = {
    outcome: batchVerdict.outcome,
    reason: batchVerdict.reason,
    windowStart: due.windowStart,
    windowEnd: due.windowEnd,
    evaluatedAt: now,
  };

  const recorded = await db.$transaction(async (tx) => {
    const locked = await lockRollout(tx, rolloutId);
    if (!locked || (options.owner !== undefined && !(await holdsLease(tx, locked.id, options.owner))))
      return false;
    const before = await loadRolloutState(tx, locked);
    if (gatesDue(before, now)?.batch !== due.batch) return false;
    await tx.$executeRaw(Prisma.sql`
      INSERT INTO rollout_gate_verdict (organization_id, rollout_id, batch, outcome, reason,
        window_start, window_end, gates, baseline, evaluated_at)
      VALUES (${locked.organizationId}::uuid, ${locked.id}::uuid, ${due.batch}, ${result.outcome},
        ${result.reason}, ${new Date(due.windowStart)}, ${new Date(due.windowEnd)},
        ${JSON.stringify(gates)}::jsonb, ${JSON.stringify(baseline)}::jsonb, ${new Date(now)})
      ON CONFLICT (rollout_id, batch) DO NOTHING`);
    const after = recordGateResult(before, due.batch, result);
    await saveRolloutState(tx, locked, before, after, {
      events: [],
      // Due now: the next step acts on the verdict at once.
      wakeAt: now,
    });
    await insertEvents(tx, locked, [
      {
        kind: "gates",
        message: `batch ${due.batch + 1} metric gates: ${result.outcome}: ${result.reason}`,
        actorType: "system",
        actorId: "rollout-controller",
        data: {
          batch: due.batch,
          outcome: result.outcome,
          gates: gates.map((g) => ({ gate: g.gate, outcome: g.outcome, reason: g.reason })),
        },
      },
    ]);
    return true;
  });
  return recorded ? { rolloutId, batch: due.batch, result, gates, baseline } : null;
}

interface CohortContext {
  appName: string;
  targetVersion: string;
  canary: CohortNode[];
  candidates: CohortNode[];
}

/**
 * The canary (the batch's own dispatched nodes, not catch-ups) and the baseline's candidates:
 * online nodes of the organization running the app on another version that the rollout has not
 * dispatched.
 */
async function cohortContext(
  tx: Pick<Tx, "$queryRaw">,
  row: RolloutRow,
  state: RolloutState,
  due: DueGates,
): Promise<CohortContext> {
  const canaryIds = state.dispatches.filter((d) => d.batch === due.batch && !d.catchUp).map((d) => d.nodeId);
  const [names] = await tx.$queryRaw<Array<{ app: string; version: string }>>(Prisma.sql`
    SELECT a.name AS app, v.version FROM app a JOIN app_version v ON v.app_id = a.id
    WHERE a.id = ${row.appId}::uuid AND v.id = ${row.appVersionId}::uuid`);
  const nodes = await tx.$queryRaw<
    Array<{ id: string; siteId: string | null; labels: Record<string, string> | null; canary: boolean }>
  >(Prisma.sql`
    SELECT n.id::text AS id, n.site_id::text AS "siteId", n.labels, (n.id = ANY(${canaryIds}::uuid[])) AS canary
    FROM node n
    WHERE n.organization_id = ${row.organizationId}::uuid AND (
      n.id = ANY(${canaryIds}::uuid[])
      OR (n.status = 'online' AND EXISTS (
        SELECT 1 FROM app_instance i
        WHERE i.node_id = n.id AND i.app_id = ${row.appId}::uuid AND i.state = 'running'
          AND i.observed_version_id IS NOT NULL AND i.observed_version_id <> ${row.appVersionId}::uuid)
        AND NOT EXISTS (
          SELECT 1 FROM rollout_node rn
          WHERE rn.rollout_id = ${row.id}::uuid AND rn.node_id = n.id AND rn.dispatched_at IS NOT NULL)))`);
  const toCohort = (n: (typeof nodes)[number]): CohortNode => ({
    id: n.id,
    siteId: n.siteId,
    labels: n.labels ?? {},
  });
  return {
    appName: names?.app ?? "",
    targetVersion: names?.version ?? "",
    canary: nodes.filter((n) => n.canary).map(toCohort),
    candidates: nodes.filter((n) => !n.canary).map(toCohort),
  };
}

async function judgeOne(
  mimir: MimirReader | null,
  tenant: string,
  gate: Gate,
  due: DueGates,
  context: CohortContext,
  baselineIds: string[],
): Promise<StoredGateVerdict> {
  const canarySelector: CohortSelector = {
    nodeIds: context.canary.map((n) => n.id),
    app: context.appName,
    version: { is: context.targetVersion },
  };
  const baselineSelector: CohortSelector = {
    nodeIds: baselineIds,
    app: context.appName,
    version: { isNot: context.targetVersion },
  };
  const queries = { canary: gateQuery(gate, canarySelector), baseline: gateQuery(gate, baselineSelector) };
  const stepSeconds = chartStepSeconds(due);
  const empty = {
    queries,
    samples: { canary: [], baseline: [] },
    chart: { stepSeconds, canary: [], baseline: [] },
  };
  const inconclusive = (reason: string): StoredGateVerdict => ({
    ...judgeGate(gate, [], []),
    ...empty,
    outcome: "inconclusive",
    reason,
  });
  if (!mimir) return inconclusive("no metrics store configured: the gate cannot be judged");
  try {
    const canary = await perNode(mimir, tenant, queries.canary, due.windowEnd, canarySelector.nodeIds);
    const baseline = await perNode(mimir, tenant, queries.baseline, due.windowEnd, baselineIds);
    const chart = await gateChart(mimir, tenant, gate, due, due.windowEnd, {
      canary: canarySelector,
      baseline: baselineSelector,
    });
    return { ...judgeGate(gate, canary, baseline), queries, samples: { canary, baseline }, chart };
  } catch (error) {
    if (error instanceof PromqlError) return inconclusive(`the query failed: ${error.message}`);
    throw error;
  }
}

function chartStepSeconds(window: { windowStart: number; windowEnd: number }): number {
  return Math.max(15, Math.ceil((window.windowEnd - window.windowStart) / 1000 / CHART_POINTS));
}

/**
 * A gate's chart: the same per-node expression over a short trailing window, averaged per cohort,
 * at steps counted back from the window's end (so the judged instant is always a point: a window
 * shorter than a step would otherwise get only its start), up to `to` (the window's end for a
 * verdict, now while the window is open).
 */
async function gateChart(
  mimir: MimirReader,
  tenant: string,
  gate: Gate,
  window: { windowStart: number; windowEnd: number },
  to: number,
  cohorts: { canary: CohortSelector; baseline: CohortSelector },
): Promise<GateChart> {
  const stepSeconds = chartStepSeconds(window);
  const chartGate = { ...gate, windowSeconds: Math.max(60, 2 * stepSeconds) };
  const stepMs = stepSeconds * 1000;
  const from = window.windowEnd - Math.floor((window.windowEnd - window.windowStart) / stepMs) * stepMs;
  if (to < from) return { stepSeconds, canary: [], baseline: [] };
  const range = { from, to, stepSeconds };
  return {
    stepSeconds,
    canary: await cohortMean(
      mimir,
      tenant,
      gateQuery(chartGate, cohorts.canary),
      range,
      cohorts.canary.nodeIds,
    ),
    baseline: await cohortMean(
      mimir,
      tenant,
      gateQuery(chartGate, cohorts.baseline),
      range,
      cohorts.baseline.nodeIds,
    ),
  };
}

/** A batch's gates while their window is open (or being judged), charted so far (issue 11, #2). */
export interface LiveGateCharts {
  batch: number;
  windowStart: number;
  windowEnd: number;
  /** The charts end here (now, or the window's end once it is over). */
  asOf: number;
  canaryNodes: number;
  /** The baseline as the judge will choose it from the fleet now. */
  baselineNodes: number;
  gates: Array<{ gate: string; chart: GateChart; error: string | null }>;
}

/**
 * The canary-vs-baseline charts of the batch whose gates are being watched, before the verdict:
 * the same cohorts (the batch's nodes; the baseline chosen as the judge does) and the same series
 * as the verdict's chart, from the window's start to now. Reads without locking (a console poll
 * must not hold up the controller); null when no batch awaits its gates.
 */
export async function liveGateCharts(
  db: Db,
  organizationId: string,
  rolloutId: string,
  options: { mimir: MimirReader; now?: () => number },
): Promise<LiveGateCharts | null> {
  const now = options.now?.() ?? Date.now();
  const row = await readRollout(db, rolloutId, organizationId);
  if (!row) return null;
  const state = await loadRolloutState(db, row).catch(() => null);
  if (!state) return null;
  const batch = state.batches.length - 1;
  if (batch < 0 || !awaitsGates(state, batch)) return null;
  const gates = batchGates(state, batch);
  const windowStart = state.batches[batch]?.finishedAt as number;
  const windowEnd = gatesWindowEnd(state.batches[batch] as BatchProgress, gates) as number;
  const due: DueGates = { batch, gates, windowStart, windowEnd };
  const context = await cohortContext(db, row, state, due);
  const baseline = chooseBaseline({
    canary: context.canary,
    candidates: context.candidates,
    seed: baselineSeed(row.id, batch),
  });
  const asOf = Math.min(now, windowEnd);
  const charts: LiveGateCharts["gates"] = [];
  for (const gate of gates) {
    const cohorts = {
      canary: {
        nodeIds: context.canary.map((n) => n.id),
        app: context.appName,
        version: { is: context.targetVersion },
      },
      baseline: {
        nodeIds: baseline.nodeIds,
        app: context.appName,
        version: { isNot: context.targetVersion },
      },
    };
    try {
      charts.push({
        gate: gate.name,
        chart: await gateChart(options.mimir, organizationId, gate, due, asOf, cohorts),
        error: null,
      });
    } catch (error) {
      if (!(error instanceof PromqlError)) throw error;
      charts.push({
        gate: gate.name,
        chart: { stepSeconds: chartStepSeconds(due), canary: [], baseline: [] },
        error: error.message,
      });
    }
  }
  return {
    batch,
    windowStart,
    windowEnd,
    asOf,
    canaryNodes: context.canary.length,
    baselineNodes: baseline.nodeIds.length,
    gates: charts,
  };
}

async function perNode(
  mimir: MimirReader,
  tenant: string,
  query: string,
  at: number,
  nodeIds: readonly string[],
): Promise<NodeSample[]> {
  if (nodeIds.length === 0) return [];
  const wanted = new Set(nodeIds);
  const byNode = new Map<string, number>();
  for (const series of await queryVector(mimir, tenant, query, at)) {
    const node = series.labels.node;
    // Operator PromQL may return series of other nodes, or several per node: keep the cohort's, summed.
    if (node !== undefined && wanted.has(node)) byNode.set(node, (byNode.get(node) ?? 0) + series.value);
  }
  return [...byNode]
    .map(([nodeId, value]) => ({ nodeId, value }))
    .sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1));
}

async function cohortMean(
  mimir: MimirReader,
  tenant: string,
  query: string,
  range: { from: number; to: number; stepSeconds: number },
  nodeIds: readonly string[],
): Promise<Array<[number, number]>> {
  if (nodeIds.length === 0) return [];
  const wanted = new Set(nodeIds);
  const sums = new Map<number, { sum: number; count: number }>();
  for (const series of await queryMatrix(mimir, tenant, query, range)) {
    if (series.labels.node === undefined || !wanted.has(series.labels.node)) continue;
    for (const [at, value] of series.points) {
      if (!Number.isFinite(value)) continue;
      const entry = sums.get(at) ?? { sum: 0, count: 0 };
      entry.sum += value;
      entry.count++;
      sums.set(at, entry);
    }
  }
  return [...sums]
    .sort(([a], [b]) => a - b)
    .map(([at, { sum, count }]) => [at, sum / count] as [number, number]);
}

async function holdsLease(tx: Tx, rolloutId: string, owner: string): Promise<boolean> {
  const [result] = await tx.$queryRaw<Array<{ ok: boolean }>>(Prisma.sql`
    SELECT (lease_owner = ${owner} AND lease_until > now()) AS ok FROM rollout WHERE id = ${rolloutId}::uuid`);
  return result?.ok ?? false;
}

/** A rollout's recorded gate verdicts, batch by batch (for the API). */
export async function loadGateVerdicts(
  db: Pick<Tx, "$queryRaw">,
  organizationId: string,
  rolloutId: string,
): Promise<
  Array<{
    batch: number;
    outcome: string;
    reason: string;
    windowStart: Date;
    windowEnd: Date;
    evaluatedAt: Date;
    gates: StoredGateVerdict[];
    baseline: Baseline;
  }>
> {
  return db.$queryRaw(Prisma.sql`
    SELECT batch, outcome, reason, window_start AS "windowStart", window_end AS "windowEnd",
      evaluated_at AS "evaluatedAt", gates, baseline
    FROM rollout_gate_verdict
    WHERE organization_id = ${organizationId}::uuid AND rollout_id = ${rolloutId}::uuid
    ORDER BY batch`);
}
