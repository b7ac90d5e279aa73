import { type AlertPolicyKind, alertPolicySpecSchema } from "@edgefleet/alerts";
import { type Db, Prisma } from "@edgefleet/db";
import type { Logger } from "../logger.js";
import type { AdvisoryLeader } from "./leader.js";
import type { MimirAlerting } from "./mimir-alerting.js";

/** Which rollout statuses raise which event policy kind. */
const KIND_OF_STATUS: Record<string, AlertPolicyKind> = {
  paused: "rollout_paused",
  awaiting_approval: "rollout_paused",
  failed: "rollout_failed",
  rolled_back: "rollout_failed",
  completed: "rollout_finished",
};
const EVENT_KINDS: AlertPolicyKind[] = ["rollout_paused", "rollout_failed", "rollout_finished"];
const ALERT_NAMES: Record<string, string> = {
  rollout_paused: "EdgefleetRolloutPaused",
  rollout_failed: "EdgefleetRolloutFailed",
  rollout_finished: "EdgefleetRolloutFinished",
};

interface StatusEvent {
  id: bigint;
  organization_id: string;
  rollout_id: string;
  status: string;
  message: string;
  at: Date;
  site_ids: string[];
  app_name: string;
}

export interface RolloutEventAlertsConfig {
  pollMs: number;
  consoleUrl: string;
  /** How long an event alert fires before Alertmanager resolves it by itself. */
  ttlMs: number;
  /** On start, events this recent are (re-)posted: Alertmanager merges alerts with equal labels. */
  lookbackMs: number;
}

/**
 * Event alerts (issue 12): a rollout paused (by its gate or a person), failed or finished is
 * posted to the organization's Alertmanager (API v2) for each enabled policy of that kind whose
 * site scope the rollout touches; Alertmanager then groups, inhibits, silences and notifies the
 * relay like any rule alert. The rollout's next status resolves the earlier kinds (a resumed
 * rollout is no longer paused). The cursor is in memory: after a restart, the last
 * `lookbackMs` of events are posted again, which Alertmanager de-duplicates by labels.
 */
export class RolloutEventAlerts {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private cursor: bigint | null = null;

  constructor(
    private readonly db: Db,
    private readonly mimir: MimirAlerting,
    private readonly leader: AdvisoryLeader,
    private readonly config: RolloutEventAlertsConfig,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.config.pollMs);
    void this.tick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.pass()
      .catch((error: unknown) => this.logger.warn({ err: error }, "rollout event alerts not posted"))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async pass(): Promise<void> {
    if (!(await this.leader.isLeader())) {
      this.cursor = null;
      return;
    }
    const since = this.cursor;
    const events = await this.db.$queryRaw<StatusEvent[]>(Prisma.sql`
      SELECT e.id, e.organization_id, e.rollout_id, coalesce(e.data->>'status', e.data->>'to') AS status,
             e.message, e.at, r.site_ids::text[] AS site_ids, a.name AS app_name
      FROM rollout_event e
      JOIN rollout r ON r.id = e.rollout_id
      JOIN app a ON a.id = r.app_id
      WHERE ${since === null ? Prisma.sql`e.at > ${new Date(Date.now() - this.config.lookbackMs)}` : Prisma.sql`e.id > ${since}`}
        AND coalesce(e.data->>'status', e.data->>'to') IS NOT NULL
      ORDER BY e.id
      LIMIT 1000`);
    if (since === null && events.length === 0) {
      const [last] = await this.db.$queryRaw<
        Array<{ id: bigint | null }>
      >`SELECT max(id) AS id FROM rollout_event`;
      this.cursor = last?.id ?? 0n;
      return;
    }
    const byOrganization = new Map<string, StatusEvent[]>();
    for (const event of events) {
      const list = byOrganization.get(event.organization_id) ?? [];
      list.push(event);
      byOrganization.set(event.organization_id, list);
    }
    for (const [organizationId, list] of byOrganization) {
      // Not advanced past a failed organization: its events are posted again next time.
      await this.postFor(organizationId, list);
    }
    const last = events.at(-1);
    if (last) this.cursor = last.id;
  }

  private async postFor(organizationId: string, events: StatusEvent[]): Promise<void> {
    const policies = (
      await this.db.alertPolicy.findMany({
        where: { organizationId, enabled: true, kind: { in: EVENT_KINDS } },
        select: { id: true, name: true, kind: true, severity: true, siteId: true, spec: true },
      })
    ).filter((policy) => alertPolicySpecSchema.safeParse(policy.spec).success);
    if (policies.length === 0) return;
    const alerts: unknown[] = [];
    for (const event of events) {
      const kind = KIND_OF_STATUS[event.status];
      for (const policy of policies) {
        // A site-scoped policy hears rollouts that touch its site (or every site).
        if (policy.siteId && event.site_ids.length > 0 && !event.site_ids.includes(policy.siteId)) continue;
        const labels = {
          alertname: ALERT_NAMES[policy.kind] ?? "EdgefleetRolloutEvent",
          organization: organizationId,
          policy: policy.id,
          kind: policy.kind,
          severity: policy.severity,
          rollout: event.rollout_id,
          app: event.app_name,
        };
        const annotations = {
          summary: `rollout of ${event.app_name}: ${event.message}`,
          policy_name: policy.name,
          console_url: `${this.config.consoleUrl.replace(/\/+$/, "")}/rollouts/${event.rollout_id}`,
        };
        const startsAt = event.at.toISOString();
        alerts.push(
          policy.kind === kind
            ? {
                labels,
                annotations,
                startsAt,
                endsAt: new Date(event.at.getTime() + this.config.ttlMs).toISOString(),
              }
            : // The rollout moved on: an earlier alert of another kind is resolved.
              { labels, annotations, endsAt: startsAt },
        );
      }
    }
    if (alerts.length > 0) await this.mimir.postAlerts(organizationId, alerts);
  }
}
