/**
 * Each site's budget use for a rollout's page (issue 11, #4): the site's budget (bytes per second,
 * concurrent downloads), what its uplink carries as measured at the NATS link (the gateway's
 * meter writes `rollout_site_uplink` from the hub's /leafz every few seconds, so every console
 * process reads the same), its nodes downloading and queued, and its artifact cache (the
 * controller's `site_cache` events: seeded, or the stated fallback to the hub).
 */
import { type Db, Prisma } from "@edgefleet/db";
import {
  isRolloutStateDocument,
  rolloutStrategySchema,
  siteUplinkBudget,
  type UplinkInterval,
  uplinkRatePoints,
} from "@edgefleet/rollout";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import type { TenantDb } from "./nodes";

/** Statuses in which the controller (and the meter) still act on a rollout's sites. */
const MOVING = new Set(["running", "paused", "awaiting_approval", "rolling_back"]);
/** A measurement older than this is no longer "current" (the meter writes every ~2 s). */
const CURRENT_FOR_MS = 15_000;
/** Sites listed per rollout (by name): a page, not a report. */
const MAX_SITES = 1_000;

const CACHE_STATUSES = ["seeded", "present", "no_cache", "full", "failed", "seeding"] as const;

export const rolloutSiteUplinksInput = z.object({
  id: z.uuid(),
  /** The site whose rate the chart shows (default: the one nearest its budget). */
  chartSiteId: z.uuid().optional(),
});

const siteUplink = z.object({
  siteId: z.string(),
  siteName: z.string(),
  /** The rollout's budget for this site (its own fields over the rollout-wide ones). */
  budget: z.object({
    bytesPerSecond: z.number().nullable(),
    concurrentDownloads: z.number().int().nullable(),
  }),
  /** Measured on the hub's link to the site's leaf; null: not measured (no leaf link seen, no budget). */
  uplink: z
    .object({
      /** The hub had the site's leaf link at the last reading. */
      linked: z.boolean(),
      /** Bytes down the link (hub to site) while the rollout moved: everything on it, not only this rollout's. */
      bytes: z.number(),
      /** Over the last interval; null when the rollout no longer moves or the reading is stale. */
      currentBytesPerSecond: z.number().nullable(),
      /** Highest rate over one interval (~2 s). */
      peakBytesPerSecond: z.number(),
      /** peak / the byte budget (1 = at the budget); null without a byte budget. */
      peakOfBudget: z.number().nullable(),
      since: z.date(),
      measuredAt: z.date(),
    })
    .nullable(),
  downloads: z.object({
    /** The site's nodes in the rollout (not those already on the version when it was planned). */
    nodes: z.number().int(),
    /** Their agents report pulling the artifact now. */
    pulling: z.number().int(),
    /** Dispatched and not yet running or failed: what the concurrent-downloads budget counts. */
    updating: z.number().int(),
    /** Due in a started batch, online, not dispatched yet: held by the site's limit or window. */
    queued: z.number().int(),
  }),
  /**
   * The site's artifact cache for this rollout: `seeded`/`present` (its nodes read the leaf),
   * `no_cache`/`full`/`failed` (the stated fallback: they fetch from the hub, `reason` says why),
   * `seeding` (before the first dispatch), null (not seeded: an older rollout, or no artifact).
   */
  cache: z.object({
    status: z.enum(CACHE_STATUSES).nullable(),
    reason: z.string().nullable(),
    at: z.date().nullable(),
  }),
});

export const rolloutSiteUplinksOutput = z.object({
  rolloutId: z.string(),
  /** The rollout declares a per-site bandwidth budget (strategy.siteBandwidth). */
  budgeted: z.boolean(),
  /** The rollout still moves (the numbers change). */
  moving: z.boolean(),
  sites: z.array(siteUplink),
  /** Rate over time for one site against its byte budget: [end of interval (ms), bytes per second]. */
  chart: z
    .object({
      siteId: z.string(),
      siteName: z.string(),
      budgetBytesPerSecond: z.number().nullable(),
      points: z.array(z.tuple([z.number(), z.number()])),
    })
    .nullable(),
});
export type RolloutSiteUplinks = z.infer<typeof rolloutSiteUplinksOutput>;
type SiteUplinkView = RolloutSiteUplinks["sites"][number];

interface DownloadRow {
  siteId: string;
  siteName: string;
  nodes: number;
  pulling: number;
  updating: number;
  queued: number;
}

interface SiteCacheEvent {
  siteId?: string;
  status?: string;
  reason?: string | null;
}

export async function getRolloutSiteUplinks(
  db: Db,
  tenant: TenantDb,
  organizationId: string,
  input: z.output<typeof rolloutSiteUplinksInput>,
): Promise<RolloutSiteUplinks> {
  const rollout = await tenant.rollout.findFirst({
    where: { id: input.id },
    select: { id: true, status: true, strategy: true, state: true, appId: true, appVersionId: true },
  });
  if (!rollout) throw new TRPCError({ code: "NOT_FOUND", message: `rollout ${input.id} not found` });
  const parsed = rolloutStrategySchema.safeParse(rollout.strategy);
  const strategy = parsed.success ? parsed.data : null;
  const moving = MOVING.has(rollout.status);
  const startedBatches = isRolloutStateDocument(rollout.state) ? rollout.state.batches.length : 0;

  // The tenant-scoped client found the rollout; the raw read below is confined to its organization.
  const downloads = await db.$queryRaw<DownloadRow[]>(Prisma.sql`
    SELECT s.id::text AS "siteId", s.name AS "siteName", count(*)::int AS nodes,
      count(*) FILTER (WHERE ai.state = 'pulling')::int AS pulling,
      count(*) FILTER (WHERE rn.dispatched_at IS NOT NULL
        AND ai.state IN ('pending', 'pulling', 'starting'))::int AS updating,
      count(*) FILTER (WHERE ${rollout.status === "running"}::boolean AND rn.dispatched_at IS NULL
        AND rn.plan_batch >= 0 AND rn.plan_batch < ${startedBatches} AND n.status = 'online'
        AND NOT (coalesce(ai.state = 'running', false)
          AND ai.observed_version_id = ${rollout.appVersionId}::uuid))::int AS queued
    FROM rollout_node rn
    JOIN node n ON n.id = rn.node_id AND n.organization_id = rn.organization_id
    JOIN site s ON s.id = n.site_id AND s.organization_id = n.organization_id
    LEFT JOIN app_instance ai ON ai.node_id = n.id AND ai.organization_id = n.organization_id
      AND ai.app_id = ${rollout.appId}::uuid
    WHERE rn.rollout_id = ${rollout.id}::uuid AND rn.organization_id = ${organizationId}::uuid
      AND (rn.plan_batch IS NULL OR rn.plan_batch >= 0)
    GROUP BY s.id, s.name
    ORDER BY s.name
    LIMIT ${MAX_SITES}`);
  const measured = await tenant.rolloutSiteUplink.findMany({
    where: { rolloutId: rollout.id },
    select: {
      siteId: true,
      linked: true,
      bytes: true,
      rateBps: true,
      peakBps: true,
      history: true,
      startedAt: true,
      updatedAt: true,
      site: { select: { name: true } },
    },
  });
  const cacheEvents = await tenant.rolloutEvent.findMany({
    where: { rolloutId: rollout.id, kind: { in: ["site_cache", "site_cache_ready"] } },
    orderBy: { id: "asc" },
    select: { kind: true, data: true, at: true },
  });
  const seeded = cacheEvents.some((e) => e.kind === "site_cache_ready");
  const cacheOf = new Map<string, SiteUplinkView["cache"]>();
  for (const event of cacheEvents) {
    const data = (event.data ?? {}) as SiteCacheEvent;
    if (event.kind !== "site_cache" || !data.siteId) continue;
    const status = CACHE_STATUSES.find((s) => s === data.status) ?? "failed";
    cacheOf.set(data.siteId, { status, reason: data.reason ?? null, at: event.at });
  }

  const now = Date.now();
  const bySite = new Map<string, DownloadRow>(downloads.map((d) => [d.siteId, d]));
  // A site measured whose nodes have since moved elsewhere still shows what its link carried.
  for (const row of measured) {
    if (!bySite.has(row.siteId) && bySite.size < MAX_SITES)
      bySite.set(row.siteId, {
        siteId: row.siteId,
        siteName: row.site.name,
        nodes: 0,
        pulling: 0,
        updating: 0,
        queued: 0,
      });
  }
  const measuredOf = new Map(measured.map((row) => [row.siteId, row]));
  const sites: SiteUplinkView[] = [...bySite.values()]
    .sort((a, b) => a.siteName.localeCompare(b.siteName))
    .map((site) => {
      const budget = strategy ? siteUplinkBudget(strategy, site.siteId) : {};
      const row = measuredOf.get(site.siteId);
      const bytesPerSecond = budget.bytesPerSecond ?? null;
      const current = moving && row !== undefined && now - row.updatedAt.getTime() <= CURRENT_FOR_MS;
      return {
        siteId: site.siteId,
        siteName: site.siteName,
        budget: { bytesPerSecond, concurrentDownloads: budget.concurrentDownloads ?? null },
        uplink: row
          ? {
              linked: row.linked,
              bytes: row.bytes,
              currentBytesPerSecond: current ? row.rateBps : null,
              peakBytesPerSecond: row.peakBps,
              peakOfBudget: bytesPerSecond ? row.peakBps / bytesPerSecond : null,
              since: row.startedAt,
              measuredAt: row.updatedAt,
            }
          : null,
        downloads: {
          nodes: site.nodes,
          pulling: site.pulling,
          updating: site.updating,
          queued: site.queued,
        },
        cache: cacheOf.get(site.siteId) ?? {
          status: !seeded && moving && startedBatches === 0 ? "seeding" : null,
          reason: null,
          at: null,
        },
      };
    });

  return {
    rolloutId: rollout.id,
    budgeted: Boolean(strategy?.siteBandwidth),
    moving,
    sites,
    chart: chartOf(sites, measuredOf, input.chartSiteId),
  };
}

/** The asked site's rate history, else the measured site nearest its budget (or carrying most). */
function chartOf(
  sites: SiteUplinkView[],
  measured: Map<string, { history: unknown }>,
  asked: string | undefined,
): RolloutSiteUplinks["chart"] {
  const candidates = sites.filter((s) => s.uplink !== null && measured.has(s.siteId));
  const pick =
    candidates.find((s) => s.siteId === asked) ??
    [...candidates].sort(
      (a, b) =>
        (b.uplink?.peakOfBudget ?? 0) - (a.uplink?.peakOfBudget ?? 0) ||
        (b.uplink?.bytes ?? 0) - (a.uplink?.bytes ?? 0),
    )[0];
  if (!pick) return null;
  const history = measured.get(pick.siteId)?.history;
  return {
    siteId: pick.siteId,
    siteName: pick.siteName,
    budgetBytesPerSecond: pick.budget.bytesPerSecond,
    points: uplinkRatePoints(Array.isArray(history) ? (history as UplinkInterval[]) : []),
  };
}
