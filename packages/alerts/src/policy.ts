/**
 * Alert policies: what should wake someone. A policy is one of a few typed presets or advanced
 * PromQL, scoped to nodes by a label selector and/or one site, with a severity. Metric presets
 * compile to Mimir ruler rules (rules.ts); event presets (rollout paused/failed/finished) are
 * posted to the tenant's Alertmanager by the gateway when the event happens.
 */
import { z } from "zod";

export const ALERT_SEVERITIES = ["critical", "warning", "info"] as const;
export type AlertSeverity = (typeof ALERT_SEVERITIES)[number];
export const alertSeveritySchema = z.enum(ALERT_SEVERITIES);

const minutes = (max: number) =>
  z
    .number()
    .int()
    .min(0, "0 (fire at once) or more minutes")
    .max(max, `at most ${max} minutes`)
    .describe("minutes the condition must hold before the alert fires (0: at once)");
const percent = z.number().gt(0, "above 0").lte(100, "at most 100").describe("percent");

/** Parameters of each policy kind; the kind names the preset. */
export const alertPolicySpecSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("node_offline"), forMinutes: minutes(1440) }),
  z.object({ kind: z.literal("site_offline"), forMinutes: minutes(1440) }),
  z.object({ kind: z.literal("cpu_above"), thresholdPercent: percent, forMinutes: minutes(1440) }),
  z.object({ kind: z.literal("memory_above"), thresholdPercent: percent, forMinutes: minutes(1440) }),
  z.object({ kind: z.literal("disk_above"), thresholdPercent: percent, forMinutes: minutes(1440) }),
  z.object({
    kind: z.literal("app_crash_looping"),
    /** Restarts of one app on one node within `windowMinutes` that count as a crash loop. */
    restarts: z.number().int().min(1).max(1000),
    windowMinutes: z.number().int().min(1, "at least 1 minute").max(1440, "at most 1440 minutes"),
  }),
  z.object({
    kind: z.literal("bandwidth_over_budget"),
    /** Bytes a site may move (received + sent, all its nodes) per window. */
    budgetBytes: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    window: z.enum(["1h", "1d"]),
  }),
  z.object({ kind: z.literal("rollout_paused") }),
  z.object({ kind: z.literal("rollout_failed") }),
  z.object({ kind: z.literal("rollout_finished") }),
  z.object({
    kind: z.literal("promql"),
    /** Fires for every series the expression returns (validated against Mimir on save). */
    expr: z.string().trim().min(1, "expr is required").max(4000, "expr: at most 4000 characters"),
    forMinutes: z.number().int().min(0).max(1440),
  }),
]);
export type AlertPolicySpec = z.infer<typeof alertPolicySpecSchema>;
export type AlertPolicyKind = AlertPolicySpec["kind"];

/** Kinds the gateway posts to Alertmanager itself, when the event happens (no ruler rule). */
export const EVENT_POLICY_KINDS = new Set<AlertPolicyKind>([
  "rollout_paused",
  "rollout_failed",
  "rollout_finished",
]);

/** A policy as the compiler needs it (the database row, with its site resolved). */
export interface CompilablePolicy {
  id: string;
  name: string;
  severity: AlertSeverity;
  enabled: boolean;
  spec: AlertPolicySpec;
  /** Node label selector (Kubernetes syntax, @edgefleet/selectors); "" = every node. */
  selector: string;
  /** The site the policy is limited to, or null for every site. */
  siteId: string | null;
}
