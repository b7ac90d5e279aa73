// The policy module only (pure zod): the package index also holds node-only code (crypto, net).
import { ALERT_SEVERITIES, alertPolicySpecSchema } from "@edgefleet/alerts/policy";
import { quietHoursSchema } from "@edgefleet/alerts/quiet-hours";
import { SELECTOR_MAX_LENGTH } from "@edgefleet/selectors";
import { z } from "zod";

// Input schemas of alert policies and channels (zod only, so the console validates with them too).

const policyName = z.string().trim().min(1, "a name is required").max(100, "name: at most 100 characters");
const severity = z.enum(ALERT_SEVERITIES);
const selector = z.string().trim().max(SELECTOR_MAX_LENGTH);

export const alertPolicyIdInput = z.object({ id: z.uuid() });

export const createAlertPolicyInput = z.object({
  name: policyName,
  severity,
  spec: alertPolicySpecSchema,
  /** Node label selector, e.g. `tier=canary`; empty: every node. Not for `promql` (the expression is its scope). */
  selector: selector.default(""),
  /** Limit to one site of the organization; not for `promql`. */
  siteId: z.uuid().nullable().default(null),
  enabled: z.boolean().default(true),
});

export const updateAlertPolicyInput = z.object({
  id: z.uuid(),
  name: policyName.optional(),
  severity: severity.optional(),
  spec: alertPolicySpecSchema.optional(),
  selector: selector.optional(),
  /** null: every site. */
  siteId: z.uuid().nullable().optional(),
  enabled: z.boolean().optional(),
});

export const ALERT_CHANNEL_KINDS = ["webhook", "email"] as const;

/** One object (the REST layer needs an object at the top); the target is checked per kind. */
export const createAlertChannelInput = z
  .object({
    kind: z.enum(ALERT_CHANNEL_KINDS),
    name: policyName,
    /** webhook: an http(s) URL outside the control plane (receives Standard Webhooks-signed JSON); email: an address. */
    target: z.string().trim().min(1, "target is required").max(2000),
    minSeverity: severity.default("info"),
  })
  .superRefine((input, ctx) => {
    if (input.kind === "email" && !z.email().safeParse(input.target).success) {
      ctx.addIssue({ code: "custom", path: ["target"], message: "target must be an e-mail address" });
    }
  });

export const updateAlertChannelInput = z.object({
  id: z.uuid(),
  name: policyName.optional(),
  minSeverity: severity.optional(),
  /** true re-enables a channel the relay switched off after repeated failures. */
  enabled: z.boolean().optional(),
});

export const alertChannelIdInput = z.object({ id: z.uuid() });

export const alertDeliveriesInput = z.object({
  channelId: z.uuid().optional(),
  limit: z.number().int().min(1).max(500).default(100),
});

/** A silence holds back the alerts of one site or one node for a while (Alertmanager's silences). */
export const createAlertSilenceInput = z
  .object({
    siteId: z.uuid().optional(),
    nodeId: z.uuid().optional(),
    /** How long from now; at most a week (longer is a policy change, not a silence). */
    durationMinutes: z
      .number()
      .int()
      .min(1, "at least 1 minute")
      .max(7 * 24 * 60, "at most a week (10080 minutes)"),
    comment: z.string().trim().max(500, "comment: at most 500 characters").default(""),
  })
  .superRefine((input, ctx) => {
    if ((input.siteId === undefined) === (input.nodeId === undefined)) {
      ctx.addIssue({ code: "custom", path: ["siteId"], message: "give either a siteId or a nodeId" });
    }
  });

export const alertSilenceIdInput = z.object({ id: z.uuid() });

export const alertHistoryInput = z.object({
  limit: z.number().int().min(1).max(500).default(100),
});

export const setQuietHoursInput = z.object({
  siteId: z.uuid(),
  /** Daily, in the site's time zone; null: none. */
  quietHours: quietHoursSchema.nullable(),
});
