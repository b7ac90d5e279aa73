/**
 * What the Alerts page shows: the alerts firing now (the organization's Alertmanager, which
 * knows which are silenced, inhibited or muted by quiet hours) and the history (the relay's
 * outbox: one row per alert state change and channel, kept for the gateway's retention).
 */
import { ALERT_SEVERITIES } from "@edgefleet/alerts";
import { z } from "zod";
import { alertHistoryInput } from "../schemas/alerts";
import type { AlertmanagerApi, AmAlert, AmMatcher } from "./alertmanager-api";
import type { TenantDb } from "./nodes";

export { alertHistoryInput };

const severity = z.enum(ALERT_SEVERITIES).or(z.string());

export const firingAlertOutput = z.object({
  fingerprint: z.string(),
  name: z.string(),
  /** active: being notified; silenced, inhibited (its site is down) or muted (quiet hours): held back. */
  state: z.enum(["active", "silenced", "inhibited", "muted"]),
  severity,
  summary: z.string(),
  policyId: z.string().nullable(),
  policyName: z.string().nullable(),
  siteId: z.string().nullable(),
  siteName: z.string().nullable(),
  nodeId: z.string().nullable(),
  nodeName: z.string().nullable(),
  rolloutId: z.string().nullable(),
  consoleUrl: z.string().nullable(),
  startsAt: z.date(),
  silencedBy: z.array(z.string()),
  labels: z.record(z.string(), z.string()),
});
export type FiringAlert = z.infer<typeof firingAlertOutput>;

/**
 * Whether a silence's matchers all hold for a label set (Alertmanager's rules: regexes are
 * anchored, a missing label is ""). Alertmanager itself marks an alert silenced only when its
 * group is next flushed (up to a group interval later), so the page applies active silences
 * itself to show a new silence at once.
 */
export function silenceMatches(matchers: readonly AmMatcher[], labels: Record<string, string>): boolean {
  return matchers.every((matcher) => {
    const value = labels[matcher.name] ?? "";
    let equal: boolean;
    if (matcher.isRegex) {
      try {
        equal = new RegExp(`^(?:${matcher.value})$`).test(value);
      } catch {
        return false;
      }
    } else equal = value === matcher.value;
    return matcher.isEqual === false ? !equal : equal;
  });
}

function stateOf(alert: AmAlert, silencedBy: string[]): FiringAlert["state"] {
  if (silencedBy.length > 0) return "silenced";
  if (alert.status.inhibitedBy.length > 0) return "inhibited";
  if ((alert.status.mutedBy ?? []).length > 0) return "muted";
  return "active";
}

const SEVERITY_ORDER: Record<string, number> = { critical: 0, warning: 1, info: 2 };

/** Firing alerts, most severe first then newest, with node and site names from the database. */
export async function firingAlerts(db: TenantDb, alertmanager: AlertmanagerApi): Promise<FiringAlert[]> {
  const [alerts, silences] = await Promise.all([alertmanager.alerts(), alertmanager.silences()]);
  const active = silences.filter((silence) => silence.status.state === "active");
  const nodeIds = [...new Set(alerts.map((a) => a.labels.node).filter(isUuid))];
  const siteIds = [...new Set(alerts.map((a) => a.labels.site_id).filter(isUuid))];
  const [nodes, sites] = await Promise.all([
    nodeIds.length
      ? db.node.findMany({ where: { id: { in: nodeIds } }, select: { id: true, name: true } })
      : [],
    siteIds.length
      ? db.site.findMany({ where: { id: { in: siteIds } }, select: { id: true, name: true } })
      : [],
  ]);
  const nodeName = new Map(nodes.map((n) => [n.id, n.name]));
  const siteName = new Map(sites.map((s) => [s.id, s.name]));
  return alerts
    .map((alert) => {
      const { labels, annotations } = alert;
      // Alertmanager's own marks can be stale both ways until the next flush: active silences decide.
      const silencedBy = active
        .filter(
          (silence) =>
            alert.status.silencedBy.includes(silence.id) || silenceMatches(silence.matchers, labels),
        )
        .map((silence) => silence.id);
      return {
        fingerprint: alert.fingerprint,
        name: annotations.policy_name ?? labels.alertname ?? "alert",
        state: stateOf(alert, silencedBy),
        severity: labels.severity ?? "warning",
        summary: annotations.summary ?? labels.alertname ?? "",
        policyId: labels.policy ?? null,
        policyName: annotations.policy_name ?? null,
        siteId: labels.site_id || null,
        siteName: (labels.site_id && siteName.get(labels.site_id)) || labels.site || null,
        nodeId: labels.node || null,
        nodeName: (labels.node && nodeName.get(labels.node)) || null,
        rolloutId: labels.rollout || null,
        consoleUrl: annotations.console_url ?? null,
        startsAt: new Date(alert.startsAt),
        silencedBy,
        labels,
      };
    })
    .sort(
      (a, b) =>
        (SEVERITY_ORDER[a.severity] ?? 3) - (SEVERITY_ORDER[b.severity] ?? 3) ||
        b.startsAt.getTime() - a.startsAt.getTime(),
    );
}

function isUuid(value: string | undefined): value is string {
  return value !== undefined && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

export const alertHistoryOutput = z.object({
  id: z.string(),
  alertStatus: z.string(),
  name: z.string(),
  summary: z.string(),
  severity: z.string(),
  channelId: z.string(),
  channelName: z.string(),
  channelKind: z.string(),
  /** pending | delivered | failed | dropped */
  state: z.string(),
  attempts: z.number().int(),
  startsAt: z.date().nullable(),
  createdAt: z.date(),
  deliveredAt: z.date().nullable(),
});

interface StoredAlert {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  startsAt?: string;
}

/** The newest notifications first (the relay's outbox; delivered ones expire after the retention). */
export async function alertHistory(db: TenantDb, input: z.output<typeof alertHistoryInput>) {
  const rows = await db.alertNotification.findMany({
    orderBy: { createdAt: "desc" },
    take: input.limit,
    select: {
      id: true,
      alertStatus: true,
      alert: true,
      state: true,
      attempts: true,
      createdAt: true,
      deliveredAt: true,
      channel: { select: { id: true, name: true, kind: true } },
    },
  });
  return rows.map((row) => {
    const alert = (row.alert ?? {}) as StoredAlert;
    const startsAt = alert.startsAt ? new Date(alert.startsAt) : null;
    return {
      id: row.id,
      alertStatus: row.alertStatus,
      name: alert.annotations?.policy_name ?? alert.labels?.alertname ?? "alert",
      summary: alert.annotations?.summary ?? "",
      severity: alert.labels?.severity ?? "",
      channelId: row.channel.id,
      channelName: row.channel.name,
      channelKind: row.channel.kind,
      state: row.state,
      attempts: row.attempts,
      startsAt: startsAt && !Number.isNaN(startsAt.getTime()) ? startsAt : null,
      createdAt: row.createdAt,
      deliveredAt: row.deliveredAt,
    };
  });
}
