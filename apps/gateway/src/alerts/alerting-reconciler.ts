import { createHash } from "node:crypto";
import {
  type AlertSeverity,
  alertmanagerConfig,
  alertmanagerConfigUpload,
  alertPolicySpecSchema,
  type CompilablePolicy,
  compileRuleGroups,
  type RuleGroup,
  relayToken,
  type SeverityTimings,
} from "@edgefleet/alerts";
import type { Db } from "@edgefleet/db";
import { stringify } from "yaml";
import { runInBackground } from "../background.js";
import type { Logger } from "../logger.js";
import type { AlertingMetrics } from "./alerting-metrics.js";
import type { AdvisoryLeader } from "./leader.js";
import type { MimirAlerting } from "./mimir-alerting.js";

export interface ReconcilerConfig {
  /** Where Alertmanager reaches the relay (the gateway's HTTP base URL). */
  relayUrl: string;
  relaySecret: string;
  consoleUrl: string;
  evaluationInterval: string;
  timings: Record<AlertSeverity, SeverityTimings>;
  /** How often organizations whose policies changed (or that failed) are applied. */
  syncMs: number;
  /** How often every organization's Mimir state is compared with the desired one (drift). */
  driftCheckMs: number;
  /** After a failure, wait this long before the next attempt for that organization. */
  retryMs?: number;
}

/**
 * Keeps each organization's Mimir ruler rule groups and Alertmanager config equal to what its
 * policies compile to. A new organization (no alerting_state row) gets its config at the next
 * tick; a policy change bumps `revision` and is applied within `syncMs`; every `driftCheckMs`
 * all organizations are compared with Mimir and differences rewritten (drift repaired).
 * Failures are kept on the organization (`lastError`, shown by alert.status) and counted.
 */
export class AlertingReconciler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private lastDriftCheck = 0;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly mimir: MimirAlerting,
    private readonly leader: AdvisoryLeader,
    private readonly config: ReconcilerConfig,
    private readonly metrics: AlertingMetrics,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.config.syncMs);
    void this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /**
   * One pass (exposed for tests): due organizations, or all of them when a drift check is due.
   * Never rejects: ticks run from a timer, and a failed one (Postgres slow) is logged, counted
   * and retried by the next.
   */
  tick(): Promise<void> {
    if (this.running || this.stopped) return this.running ?? Promise.resolve();
    this.running = runInBackground(this.logger, "alerting-reconciler", () => this.pass()).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<void> {
    if (!(await this.leader.isLeader())) return;
    const now = Date.now();
    const driftCheck = now - this.lastDriftCheck >= this.config.driftCheckMs;
    let organizationIds: string[];
    try {
      organizationIds = driftCheck ? await this.allOrganizations() : await this.dueOrganizations();
    } catch (error) {
      this.logger.warn({ err: error }, "cannot list organizations to reconcile");
      return;
    }
    if (driftCheck) this.lastDriftCheck = now;
    for (const organizationId of organizationIds) {
      if (this.stopped) return;
      await this.reconcile(organizationId);
    }
    await this.updateOutOfSync();
  }

  private async allOrganizations(): Promise<string[]> {
    return (await this.db.organization.findMany({ select: { id: true } })).map((org) => org.id);
  }

  /** Never applied, changed since, or failed and due for another try. */
  private async dueOrganizations(): Promise<string[]> {
    const retryBefore = new Date(Date.now() - (this.config.retryMs ?? 30_000));
    const rows = await this.db.$queryRaw<Array<{ id: string }>>`
      SELECT o.id FROM organization o
      LEFT JOIN alerting_state s ON s.organization_id = o.id
      WHERE s.organization_id IS NULL
         OR s.applied_revision <> s.revision
         OR (s.last_error IS NOT NULL AND s.last_error_at < ${retryBefore})`;
    return rows.map((row) => row.id);
  }

  private async updateOutOfSync(): Promise<void> {
    const [row] = await this.db.$queryRaw<Array<{ count: bigint }>>`
      SELECT count(*) AS count FROM alerting_state WHERE last_error IS NOT NULL OR applied_revision <> revision`;
    this.metrics.outOfSync.set(Number(row?.count ?? 0));
  }

  /** The organization's desired rule groups and Alertmanager config, from its policies. */
  async desired(organizationId: string): Promise<{ groups: RuleGroup[]; amConfig: string; upload: string }> {
    const rows = await this.db.alertPolicy.findMany({
      where: { organizationId },
      select: {
        id: true,
        name: true,
        severity: true,
        enabled: true,
        spec: true,
        selector: true,
        siteId: true,
      },
    });
    const policies: CompilablePolicy[] = [];
    for (const row of rows) {
      const spec = alertPolicySpecSchema.safeParse(row.spec);
      if (spec.success) policies.push({ ...row, spec: spec.data });
      else
        this.logger.error(
          { organizationId, policy: row.id },
          "alert policy with an unreadable spec left out",
        );
    }
    const groups = compileRuleGroups(policies, {
      organizationId,
      consoleUrl: this.config.consoleUrl,
      evaluationInterval: this.config.evaluationInterval,
    });
    const quietSites = await this.db.site.findMany({
      where: { organizationId, quietHoursStart: { not: null }, quietHoursEnd: { not: null } },
      select: { id: true, timeZone: true, quietHoursStart: true, quietHoursEnd: true },
    });
    const amOptions = {
      organizationId,
      quietHours: quietSites.map((site) => ({
        siteId: site.id,
        timeZone: site.timeZone,
        start: site.quietHoursStart ?? "",
        end: site.quietHoursEnd ?? "",
      })),
      relayUrl: this.config.relayUrl,
      relayToken: relayToken(this.config.relaySecret, organizationId),
      timings: this.config.timings,
    };
    return {
      groups,
      amConfig: stringify(alertmanagerConfig(policies, amOptions), { lineWidth: 0 }),
      upload: alertmanagerConfigUpload(policies, amOptions),
    };
  }

  /** Makes Mimir hold exactly the desired state for one organization; records the outcome. */
  async reconcile(organizationId: string): Promise<void> {
    const state = await this.db.alertingState.findUnique({ where: { organizationId } });
    const revision = state?.revision ?? 0;
    try {
      const { groups, amConfig, upload } = await this.desired(organizationId);
      let changes = 0;
      if ((await this.mimir.alertmanagerConfig(organizationId)) !== amConfig) {
        await this.mimir.putAlertmanagerConfig(organizationId, upload);
        changes++;
      }
      const current = new Map(
        (await this.mimir.ruleGroups(organizationId)).map((group) => [group.name, group]),
      );
      for (const group of groups) {
        const existing = current.get(group.name);
        if (!existing || canonical(existing) !== canonical(group)) {
          await this.mimir.putRuleGroup(organizationId, group);
          changes++;
        }
        current.delete(group.name);
      }
      for (const stale of current.keys()) {
        await this.mimir.deleteRuleGroup(organizationId, stale);
        changes++;
      }
      const hash = createHash("sha256").update(amConfig).update(JSON.stringify(groups)).digest("hex");
      const applied = {
        appliedHash: hash,
        appliedAt: new Date(),
        appliedRevision: revision,
        lastError: null,
        lastErrorAt: null,
        checkedAt: new Date(),
      };
      await this.db.alertingState.upsert({
        where: { organizationId },
        create: { organizationId, revision, ...applied },
        update: applied,
      });
      // A change although the revision had been applied: someone or something altered Mimir.
      if (changes > 0 && state && state.appliedRevision === revision) this.metrics.driftRepairs.inc();
      this.metrics.syncs.inc({ result: "ok" });
      if (changes > 0)
        this.logger.info({ organizationId, changes, revision }, "alerting config applied to Mimir");
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.metrics.syncs.inc({ result: "error" });
      this.logger.warn({ organizationId, err: error }, "alerting config not applied");
      await this.db.alertingState
        .upsert({
          where: { organizationId },
          create: {
            organizationId,
            revision,
            lastError: message.slice(0, 1000),
            lastErrorAt: new Date(),
            checkedAt: new Date(),
          },
          update: { lastError: message.slice(0, 1000), lastErrorAt: new Date(), checkedAt: new Date() },
        })
        .catch((writeError: unknown) =>
          this.logger.error({ err: writeError }, "cannot record the alerting failure"),
        );
    }
  }
}

/** The fields Edgefleet writes, in a fixed order: Mimir's answer and ours compare equal when they mean the same. */
function canonical(group: RuleGroup): string {
  return JSON.stringify({
    name: group.name,
    interval: group.interval,
    rules: (group.rules ?? []).map((rule) => ({
      alert: rule.alert,
      expr: rule.expr,
      for: rule.for ?? null,
      labels: sortKeys(rule.labels ?? {}),
      annotations: sortKeys(rule.annotations ?? {}),
    })),
  });
}

function sortKeys(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
