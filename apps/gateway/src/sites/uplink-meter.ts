import { type Db, Prisma } from "@edgefleet/db";
import { nextUplinkUse, type UplinkInterval, type UplinkUse } from "@edgefleet/rollout";
import { runInBackground } from "../background.js";
import type { EdgeService } from "../edge/service.js";
import type { Logger } from "../logger.js";
import { type HubMonitor, readLeafz, siteLeafName } from "./leaf-links.js";

export interface SiteUplinkMeterOptions {
  /**
   * The hub's monitoring endpoint, or every node's of a hub cluster (NATS_MONITOR_URL): their
   * /leafz counters are the measurement (a site's leaf may link to any node).
   */
  monitorUrl: HubMonitor;
  /** How often the hub is read and the rows written (GATEWAY_UPLINK_METER_MS). */
  intervalMs: number;
  /** The rollout controller's replica id: only rollouts leased to it are measured here. */
  replicaId: string;
  /** The sites of a rollout are looked up again after this long (they change only with late joiners). */
  sitesTtlMs?: number;
}

interface MeteredRollout {
  rolloutId: string;
  organizationId: string;
  slug: string;
}

interface StoredUse {
  rolloutId: string;
  siteId: string;
  linked: boolean;
  bytes: number;
  rateBps: number | null;
  peakBps: number;
  readings: number;
  counters: Record<string, number>;
  readAt: Date | null;
  history: UplinkInterval[];
}

/**
 * Measures each site's uplink while a rollout with a bandwidth budget moves (issue 11, #4), where
 * the budget is meant to hold: at the NATS link, from the hub's /leafz byte counters of the site
 * leaf's connections (one read for all sites per tick). The rollout's lease holder measures it, so
 * one replica writes each rollout's rows; the row (`rollout_site_uplink`) carries the counters,
 * so the next lease holder continues where the last one stopped. Every console process reads the
 * rows (rollout.siteUplinks), never a replica's memory.
 */
export class SiteUplinkMeter implements EdgeService {
  readonly name = "site-uplink-meter";
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly sites = new Map<string, { at: number; sites: Array<{ id: string; name: string }> }>();

  constructor(
    private readonly db: Db,
    private readonly options: SiteUplinkMeterOptions,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = runInBackground(this.logger, "site-uplink-meter", () => this.tick()).finally(() => {
        this.running = null;
      });
    }, this.options.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One measurement of every budgeted rollout this replica leases (exposed for tests). */
  async tick(): Promise<number> {
    const rollouts = await this.db.$queryRaw<MeteredRollout[]>(Prisma.sql`
      SELECT r.id::text AS "rolloutId", r.organization_id::text AS "organizationId", o.slug
      FROM rollout r JOIN organization o ON o.id = r.organization_id
      WHERE r.lease_owner = ${this.options.replicaId} AND r.lease_until > now()
        AND r.status IN ('running', 'paused', 'awaiting_approval', 'rolling_back')
        AND jsonb_typeof(r.strategy -> 'siteBandwidth') = 'object'`);
    for (const id of this.sites.keys()) if (!rollouts.some((r) => r.rolloutId === id)) this.sites.delete(id);
    if (rollouts.length === 0) return 0;
    const reading = await readLeafz(this.options.monitorUrl);
    const at = reading.at ?? Date.now();
    const stored = new Map(
      (
        await this.db.$queryRaw<StoredUse[]>(Prisma.sql`
          SELECT rollout_id::text AS "rolloutId", site_id::text AS "siteId", linked, bytes,
            rate_bps AS "rateBps", peak_bps AS "peakBps", readings, counters, read_at AS "readAt", history
          FROM rollout_site_uplink
          WHERE rollout_id IN (${Prisma.join(rollouts.map((r) => Prisma.sql`${r.rolloutId}::uuid`))})`)
      ).map((row) => [`${row.rolloutId}/${row.siteId}`, row]),
    );
    const rows: Prisma.Sql[] = [];
    for (const rollout of rollouts) {
      for (const site of await this.sitesOf(rollout)) {
        const leafName = siteLeafName(rollout.slug, site.name);
        const previous = stored.get(`${rollout.rolloutId}/${site.id}`);
        const use = nextUplinkUse(
          previous ? useOf(previous) : null,
          { at, connections: reading.connections.get(leafName) ?? null },
          this.options.intervalMs,
        );
        if (previous && use.readAt === previous.readAt?.getTime()) continue;
        rows.push(Prisma.sql`(${rollout.organizationId}::uuid, ${rollout.rolloutId}::uuid, ${site.id}::uuid,
          ${leafName}, ${use.linked}, ${use.bytes}, ${use.rateBps}, ${use.peakBps}, ${use.readings},
          ${JSON.stringify(use.counters)}::jsonb, ${new Date(use.readAt)}, ${JSON.stringify(use.history)}::jsonb, now())`);
      }
    }
    if (rows.length === 0) return 0;
    // A reading older than the stored one (a replica that lost the lease mid-tick) changes nothing.
    await this.db.$executeRaw(Prisma.sql`
      INSERT INTO rollout_site_uplink (organization_id, rollout_id, site_id, leaf_name, linked, bytes,
        rate_bps, peak_bps, readings, counters, read_at, history, updated_at)
      VALUES ${Prisma.join(rows)}
      ON CONFLICT (rollout_id, site_id) DO UPDATE SET leaf_name = EXCLUDED.leaf_name,
        linked = EXCLUDED.linked, bytes = EXCLUDED.bytes, rate_bps = EXCLUDED.rate_bps,
        peak_bps = EXCLUDED.peak_bps, readings = EXCLUDED.readings, counters = EXCLUDED.counters,
        read_at = EXCLUDED.read_at, history = EXCLUDED.history, updated_at = EXCLUDED.updated_at
      WHERE rollout_site_uplink.read_at IS NULL OR rollout_site_uplink.read_at < EXCLUDED.read_at`);
    return rows.length;
  }

  /** The sites of the rollout's nodes that may download (not those already on the version). */
  private async sitesOf(rollout: MeteredRollout): Promise<Array<{ id: string; name: string }>> {
    const known = this.sites.get(rollout.rolloutId);
    if (known && Date.now() - known.at < (this.options.sitesTtlMs ?? 30_000)) return known.sites;
    const sites = await this.db.$queryRaw<Array<{ id: string; name: string }>>(Prisma.sql`
      SELECT s.id::text AS id, s.name FROM site s
      WHERE s.organization_id = ${rollout.organizationId}::uuid
        AND EXISTS (SELECT 1 FROM rollout_node rn JOIN node n ON n.id = rn.node_id AND n.organization_id = rn.organization_id
                    WHERE rn.rollout_id = ${rollout.rolloutId}::uuid AND n.site_id = s.id
                      AND (rn.plan_batch IS NULL OR rn.plan_batch >= 0))
      ORDER BY s.name`);
    this.sites.set(rollout.rolloutId, { at: Date.now(), sites });
    return sites;
  }
}

function useOf(row: StoredUse): UplinkUse {
  return {
    linked: row.linked,
    bytes: row.bytes,
    rateBps: row.rateBps,
    peakBps: row.peakBps,
    readings: row.readings,
    counters: row.counters,
    // A row without a reading time has not been read yet: treat it as read long ago.
    readAt: row.readAt?.getTime() ?? 0,
    history: row.history,
  };
}
