/**
 * The rollout controller: drives every active rollout from Postgres with the pure core
 * (@edgefleet/rollout) through @edgefleet/rollout-store's step, one transaction per step.
 *
 * Ownership: each rollout is leased to one replica (`rollout.lease_owner` / `lease_until`),
 * renewed every tick; a replica that dies (kill -9) stops renewing, and another claims the
 * rollout once the lease ran out (a few seconds). Every step re-checks the lease under the
 * rollout's row lock, so a replica that lost its lease while busy writes nothing after the new
 * owner. Within a step everything (state, node rows, desired versions) commits together, and the
 * core never dispatches a node twice, so a crash anywhere leaves no node updated twice and none
 * forgotten: the next owner decides again from the same facts.
 *
 * Wake-ups: Postgres NOTIFY (a person acted on a rollout, an agent's instance changed state, a
 * node went on or offline) and the core's `nextWakeUp` (a timeout, a pause, a window), both
 * checked by a tick every `tickMs`. A person's action steps at once; the fleet's own changes,
 * which stream in while a batch moves (thousands of nodes reporting), step no more than a
 * quarter of the time: the next such tick waits three times as long as the last one took, so on a
 * loaded gateway the controller leaves the rest to the edge services (status reports, artifact
 * chunks). Those reports are what a batch waits for: at half the time, a 20,000-node rollout's
 * status reports queued by the ten thousand behind its steps.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import {
  connectionConfigFromUrl,
  type Db,
  FLEET_CHANGED_CHANNEL,
  INSTANCES_CHANGED_CHANNEL,
  Prisma,
  ROLLOUT_CHANGED_CHANNEL,
} from "@edgefleet/db";
import { judgeDueGates, RolloutStateCache, stepRollout } from "@edgefleet/rollout-store";
import pg from "pg";
import type { EdgeService } from "../edge/service.js";
import type { Logger } from "../logger.js";

export interface RolloutControllerConfig {
  databaseUrl: string;
  /** How often leases are renewed and due rollouts stepped. */
  tickMs: number;
  /** How long a lease holds without renewal: the handover time after a replica dies. */
  leaseMs: number;
  /** This replica's id in `lease_owner` (default: host, pid and a random suffix). */
  replicaId?: string;
  /** Mimir, for metric gates (tenant = each rollout's organization). Without it gates are inconclusive. */
  mimirUrl?: string | null;
  /** Seeds site artifact caches before a rollout's first dispatch (absent: no site caches). */
  siteCache?: (onReady: (rolloutId: string) => void) => SiteCacheGate;
}

/** What the controller asks before stepping a rollout (RolloutSiteCachePrep). */
export interface SiteCacheGate {
  ready(rolloutId: string): Promise<boolean>;
  stop(): Promise<void>;
}

/** A fleet-change tick waits this many times as long as the last tick took (at most 1/(1+n) busy). */
const FLEET_CHANGE_PAUSE_FACTOR = 3;
/** Steps of one rollout in a row while it keeps moving (the core: decide again after writing). */
const MAX_STEPS_IN_A_ROW = 20;
/** Completed or rolled-back rollouts keep catching up returning nodes for this long. */
const WATCH_FINISHED_DAYS = 7;

interface Owned {
  id: string;
  organizationId: string;
  wakeAt: Date | null;
}

export class RolloutController implements EdgeService {
  readonly name = "rollout-controller";
  readonly replicaId: string;
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private running: Promise<void> | null = null;
  private again = false;
  /** A fleet change arrived during a tick: tick again after the pause (see kickSoon). */
  private againSoon = false;
  private soonTimer: NodeJS.Timeout | null = null;
  private lastTick = { endedAt: 0, ms: 0 };
  private readonly owned = new Map<string, Owned>();
  private readonly dirtyRollouts = new Set<string>();
  private readonly dirtyOrganizations = new Set<string>();
  private readonly siteCache: SiteCacheGate | null;
  /** What our last step of each rollout committed: the next one need not read it back. */
  private readonly stateCache = new RolloutStateCache();

  constructor(
    private readonly db: Db,
    private readonly config: RolloutControllerConfig,
    private readonly logger: Logger,
  ) {
    this.replicaId = config.replicaId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    // Seeding done: step the rollout again at once.
    this.siteCache =
      config.siteCache?.((rolloutId) => {
        this.dirtyRollouts.add(rolloutId);
        this.kick();
      }) ?? null;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.listen().catch((error: unknown) => {
      this.logger.warn({ err: error }, "rollout controller cannot LISTEN yet; ticks only until it can");
    });
    this.timer = setInterval(() => this.kick(), this.config.tickMs);
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.soonTimer) clearTimeout(this.soonTimer);
    this.soonTimer = null;
    await this.running;
    await this.siteCache?.stop();
    // Hand our rollouts over at once instead of after the lease runs out.
    await this.db
      .$executeRaw(
        Prisma.sql`UPDATE rollout SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ${this.replicaId}`,
      )
      .catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  /** Rollouts this replica holds the lease of (tests, logs). */
  get ownedRollouts(): string[] {
    return [...this.owned.keys()];
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({
      ...connectionConfigFromUrl(this.config.databaseUrl),
      connectionTimeoutMillis: 5_000,
    });
    client.on("error", (error) => {
      this.logger.warn({ err: error }, "rollout controller lost its LISTEN connection");
      if (this.client === client) this.client = null;
      void client.end().catch(() => undefined);
    });
    client.on("notification", (message) => {
      if (!message.payload) return;
      if (message.channel === ROLLOUT_CHANGED_CHANNEL) {
        this.dirtyRollouts.add(message.payload);
        this.kick();
      } else {
        this.dirtyOrganizations.add(message.payload);
        this.kickSoon();
      }
    });
    await client.connect();
    await client.query(`LISTEN ${ROLLOUT_CHANGED_CHANNEL}`);
    await client.query(`LISTEN ${INSTANCES_CHANGED_CHANNEL}`);
    await client.query(`LISTEN ${FLEET_CHANGED_CHANNEL}`);
    this.client = client;
  }

  /** Runs a tick now, or right after the one in progress. */
  private kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.soonTimer) clearTimeout(this.soonTimer);
    this.soonTimer = null;
    this.againSoon = false;
    const startedAt = Date.now();
    this.running = this.tick()
      .catch((error: unknown) =>
        this.logger.error({ err: error }, "rollout controller tick failed; will retry"),
      )
      .finally(() => {
        this.running = null;
        this.lastTick = { endedAt: Date.now(), ms: Date.now() - startedAt };
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.kick();
        } else if (this.againSoon) this.kickSoon();
      });
  }

  /**
   * A tick for a fleet change: once FLEET_CHANGE_PAUSE_FACTOR times as much time has passed since
   * the last tick as it took (at most a quarter of the time on fleet changes), or at the next
   * regular tick.
   */
  private kickSoon(): void {
    if (this.stopped || this.soonTimer) return;
    if (this.running) {
      this.againSoon = true;
      return;
    }
    const wait = this.lastTick.endedAt + this.lastTick.ms * FLEET_CHANGE_PAUSE_FACTOR - Date.now();
    if (wait <= 0) {
      this.kick();
      return;
    }
    this.soonTimer = setTimeout(() => {
      this.soonTimer = null;
      this.kick();
    }, wait);
  }

  private async tick(): Promise<void> {
    if (!this.client) await this.listen().catch(() => undefined);
    // Taken now: a notification arriving while we step is for the next tick, not lost.
    const dirtyRollouts = new Set(this.dirtyRollouts);
    const dirtyOrganizations = new Set(this.dirtyOrganizations);
    this.dirtyRollouts.clear();
    this.dirtyOrganizations.clear();
    const claimed = await this.claimLeases();
    const now = Date.now();
    for (const rollout of claimed) {
      const isNew = !this.owned.has(rollout.id);
      this.owned.set(rollout.id, rollout);
      const due =
        isNew ||
        dirtyRollouts.has(rollout.id) ||
        dirtyOrganizations.has(rollout.organizationId) ||
        (rollout.wakeAt !== null && rollout.wakeAt.getTime() <= now);
      if (due && !this.stopped) await this.drive(rollout.id);
    }
    for (const id of [...this.owned.keys()]) if (!claimed.some((r) => r.id === id)) this.owned.delete(id);
  }

  /**
   * Renews our leases and claims free or expired ones, for every rollout the controller watches:
   * the active ones, and finished ones (completed, rolled back) that are their app's latest, for
   * a while, so returning nodes still catch up. Rollouts locked by a step right now are skipped.
   */
  private async claimLeases(): Promise<Owned[]> {
    return this.db.$queryRaw<Owned[]>(Prisma.sql`
      UPDATE rollout r SET lease_owner = ${this.replicaId},
        lease_until = now() + ${this.config.leaseMs} * interval '1 millisecond'
      WHERE r.id IN (
        SELECT c.id FROM rollout c
        WHERE c.state ? 'persistedFormat'
          AND (c.status IN ('running', 'paused', 'awaiting_approval', 'failed', 'rolling_back')
            OR (c.status IN ('completed', 'rolled_back')
              AND c.finished_at > now() - ${WATCH_FINISHED_DAYS} * interval '1 day'
              AND NOT EXISTS (SELECT 1 FROM rollout n WHERE n.app_id = c.app_id AND n.created_at > c.created_at)))
          AND (c.lease_owner IS NULL OR c.lease_owner = ${this.replicaId} OR c.lease_until < now())
        FOR UPDATE SKIP LOCKED)
      RETURNING r.id::text AS id, r.organization_id::text AS "organizationId", r.wake_at AS "wakeAt"`);
  }

  private async drive(rolloutId: string): Promise<void> {
    // A rollout's site caches are seeded before its first dispatch (site-cache-prep.ts).
    const seeded = await this.siteCache?.ready(rolloutId).catch((error: unknown) => {
      this.logger.warn({ err: error, rolloutId }, "site cache check failed; stepping without it");
      return true;
    });
    if (seeded === false) return;
    for (let i = 0; i < MAX_STEPS_IN_A_ROW && !this.stopped; i++) {
      try {
        const outcome = await stepRollout(this.db, rolloutId, {
          owner: this.replicaId,
          cache: this.stateCache,
        });
        if ("skipped" in outcome) return;
        if (outcome.moved) {
          this.logger.info(
            {
              rolloutId,
              dispatched: outcome.dispatched,
              decisions: outcome.decisions.filter((d) => d.kind !== "wait").map((d) => d.kind),
            },
            "rollout stepped",
          );
        }
        // Metric gates whose window is over: judge them (Mimir, outside the step's transaction),
        // then step again to act on the verdict.
        if (
          outcome.decisions.some(
            (d) => d.kind === "wait" && d.reason === "gates" && d.until !== null && d.until <= Date.now(),
          )
        ) {
          const judged = await judgeDueGates(this.db, rolloutId, {
            owner: this.replicaId,
            mimir: this.config.mimirUrl ? { url: this.config.mimirUrl } : null,
          });
          if (judged) {
            this.logger.info(
              {
                rolloutId,
                batch: judged.batch,
                outcome: judged.result.outcome,
                reason: judged.result.reason,
              },
              "rollout batch judged on its metric gates",
            );
            continue;
          }
        }
        if (!outcome.moved) return;
      } catch (error) {
        this.logger.error({ err: error, rolloutId }, "rollout step failed; retried at the next tick");
        return;
      }
    }
  }
}
