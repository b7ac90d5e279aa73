import { artifactBucket, artifactObjectName, formatWireId } from "@edgefleet/agent-sdk/protocol";
import { type Db, Prisma } from "@edgefleet/db";
import { type RolloutStrategy, siteUplinkBudget } from "@edgefleet/rollout";
import { insertEvents, type RolloutEventInput } from "@edgefleet/rollout-store";
import type { Logger } from "../logger.js";
import { siteLeafName, type UplinkUse, watchLeafLink } from "../sites/leaf-links.js";
import type { SiteCacheOutcome, SiteCacheSeeder } from "../sites/site-cache-seeder.js";

/** Timeline event of one site's cache for a rollout (`data`: SiteCacheEventData). */
export const SITE_CACHE_EVENT = "site_cache";
/** Every site of the rollout is seeded or fell back: the rollout may dispatch. */
export const SITE_CACHE_READY_EVENT = "site_cache_ready";

export interface SiteCacheEventData {
  siteId: string;
  siteName: string;
  /** seeded / present: the site's nodes read the leaf; anything else: they fetch from the hub. */
  status: SiteCacheOutcome["status"];
  reason: string | null;
  artifactBytes: number | null;
  budgetBytesPerSecond: number | null;
  /** Measured on the hub's /leafz while seeding (null: not measured or no leaf link). */
  uplink: UplinkUse | null;
}

interface RolloutFacts {
  status: string;
  organizationId: string;
  orgWireId: bigint;
  accountPublicKey: string | null;
  orgSlug: string;
  strategy: RolloutStrategy;
  artifactUrl: string | null;
  artifactSha256: string | null;
  ready: boolean;
}

/**
 * Seeds the site artifact caches a rollout needs before its first dispatch (issue 11, #5): every
 * site with nodes in the rollout's plan gets the version's artifact on its leaf, one transfer each, paced to the site's bandwidth budget and measured on the hub's
 * /leafz. Until every site is seeded or has fallen back the controller does not step the rollout;
 * each site's outcome is a `site_cache` timeline event (the rollout page and API show it), so a
 * site without a cache is a stated fallback to the hub, never a silent one. The `site_cache_ready`
 * event makes this once per rollout, across replicas and restarts.
 */
export class RolloutSiteCachePrep {
  private readonly done = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly seeder: SiteCacheSeeder,
    /** Every hub node's monitoring URL (the site's uplink is read from their /leafz). */
    private readonly options: { monitorUrls: readonly string[] | null },
    private readonly onReady: (rolloutId: string) => void,
    private readonly logger: Logger,
  ) {}

  /** May the controller step this rollout now? False while its sites are being seeded. */
  async ready(rolloutId: string): Promise<boolean> {
    if (this.done.has(rolloutId)) return true;
    if (this.running.has(rolloutId)) return false;
    const facts = await this.facts(rolloutId);
    const obj = facts ? artifactObjectName(facts.artifactUrl, facts.artifactSha256) : null;
    // Only a running rollout that has not dispatched yet waits; anything else goes on as before.
    if (!facts || facts.ready || facts.status !== "running" || !obj || !facts.accountPublicKey) {
      this.done.add(rolloutId);
      return true;
    }
    const seeding = this.seedAll(rolloutId, facts, obj, facts.accountPublicKey)
      .catch((error: unknown) =>
        this.logger.error({ err: error, rolloutId }, "site cache seeding failed; retried at the next tick"),
      )
      .finally(() => {
        this.running.delete(rolloutId);
        this.onReady(rolloutId);
      });
    this.running.set(rolloutId, seeding);
    return false;
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.running.values());
  }

  private async facts(rolloutId: string): Promise<RolloutFacts | null> {
    const [row] = await this.db.$queryRaw<RolloutFacts[]>(Prisma.sql`
      SELECT r.status::text AS status, r.organization_id::text AS "organizationId", o.wire_id AS "orgWireId",
        o.nats_account_key AS "accountPublicKey", o.slug AS "orgSlug", r.strategy, v.artifact_url AS "artifactUrl",
        v.artifact_sha256 AS "artifactSha256",
        (EXISTS (SELECT 1 FROM rollout_node rn WHERE rn.rollout_id = r.id AND rn.dispatched_at IS NOT NULL)
          OR EXISTS (SELECT 1 FROM rollout_event e WHERE e.rollout_id = r.id AND e.kind = ${SITE_CACHE_READY_EVENT})) AS ready
      FROM rollout r
      JOIN organization o ON o.id = r.organization_id
      JOIN app_version v ON v.id = r.app_version_id AND v.organization_id = r.organization_id
      WHERE r.id = ${rolloutId}::uuid`);
    return row ?? null;
  }

  private async seedAll(rolloutId: string, facts: RolloutFacts, obj: string, accountPublicKey: string) {
    // The sites of the nodes the plan will update (a site's cache holds what its nodes need).
    const sites = await this.db.$queryRaw<Array<{ id: string; name: string }>>(Prisma.sql`
      SELECT s.id::text AS id, s.name FROM site s
      WHERE s.organization_id = ${facts.organizationId}::uuid
        AND EXISTS (SELECT 1 FROM rollout_node rn JOIN node n ON n.id = rn.node_id
                    WHERE rn.rollout_id = ${rolloutId}::uuid AND rn.plan_batch >= 0 AND n.site_id = s.id)
      ORDER BY s.name`);
    const bucket = artifactBucket(formatWireId(facts.orgWireId));
    const events: RolloutEventInput[] = [];
    for (const site of sites) {
      const budget = siteUplinkBudget(facts.strategy, site.id).bytesPerSecond ?? null;
      const watch = this.options.monitorUrls
        ? watchLeafLink(this.options.monitorUrls, siteLeafName(facts.orgSlug, site.name))
        : null;
      const outcome = await this.seeder.seed({
        siteId: site.id,
        accountPublicKey,
        bucket,
        obj,
        ...(budget !== null ? { bytesPerSecond: budget } : {}),
      });
      const uplink = (await watch?.stop()) ?? null;
      const data: SiteCacheEventData = {
        siteId: site.id,
        siteName: site.name,
        status: outcome.status,
        reason: "reason" in outcome ? outcome.reason : null,
        artifactBytes: "bytes" in outcome ? outcome.bytes : null,
        budgetBytesPerSecond: budget,
        uplink,
      };
      this.logger.info({ rolloutId, ...data }, "site cache prepared");
      events.push({
        kind: SITE_CACHE_EVENT,
        message: describe(data),
        actorType: "system",
        actorId: "rollout-controller",
        data,
      });
    }
    events.push({
      kind: SITE_CACHE_READY_EVENT,
      message: `site caches ready for ${sites.length} site(s)`,
      actorType: "system",
      actorId: "rollout-controller",
      data: { sites: sites.length },
    });
    await this.db.$transaction((tx) =>
      insertEvents(tx, { id: rolloutId, organizationId: facts.organizationId }, events),
    );
    this.done.add(rolloutId);
  }
}

function describe(data: SiteCacheEventData): string {
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
  const uplink = data.uplink
    ? `; uplink ${mb(data.uplink.bytes)}, peak ${mb(data.uplink.peakBytesPerSecond)}/s${
        data.budgetBytesPerSecond ? ` of a ${mb(data.budgetBytesPerSecond)}/s budget` : ""
      }`
    : "";
  switch (data.status) {
    case "seeded":
      return `site ${data.siteName}: artifact seeded into the site cache (${mb(data.artifactBytes ?? 0)})${uplink}`;
    case "present":
      return `site ${data.siteName}: artifact already in the site cache`;
    default:
      return `site ${data.siteName}: no site cache (${data.status}: ${data.reason}); its nodes fetch from the hub${uplink}`;
  }
}
