// The policy module only (pure zod): the package index also holds node-only code (crypto, net).
import { ALERT_SEVERITIES } from "@edgefleet/alerts/policy";
import { z } from "zod";

// Input schemas of Web Push subscriptions, notification preferences and push actions (zod only,
// so the console validates with them too).

/** base64url without padding, as PushSubscription.toJSON() gives the keys. */
const base64url = (field: string, min: number, max: number) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+={0,2}$/, `${field} must be base64url`)
    .min(min, `${field} is too short`)
    .max(max, `${field} is too long`);

/** What `PushSubscription.toJSON()` returns in the browser, plus the browser's name for the list. */
export const subscribePushInput = z.object({
  endpoint: z
    .string()
    .max(2000, "endpoint: at most 2000 characters")
    .refine((value) => URL.canParse(value) && new URL(value).protocol === "https:", {
      message: "endpoint must be the push service's https:// URL",
    }),
  keys: z.object({
    /** P-256 public key, uncompressed point (65 bytes → 87 characters). */
    p256dh: base64url("keys.p256dh", 80, 100),
    /** 16-byte auth secret (22 characters). */
    auth: base64url("keys.auth", 20, 30),
  }),
  userAgent: z.string().trim().max(200).optional(),
});

export const pushSubscriptionIdInput = z.object({ id: z.uuid() });

const severities = z
  .array(z.enum(ALERT_SEVERITIES))
  .max(ALERT_SEVERITIES.length)
  .transform((list) => [...new Set(list)]);

export const notificationPreferencesInput = z.object({
  /** Severities that reach this person's subscribed devices. */
  pushSeverities: severities,
  /** Severities that reach this person's own e-mail address ([] = none). */
  emailSeverities: severities,
});

/** A notification action's token (from the push message, or the confirm page's URL). */
export const pushActionInput = z.object({
  token: z.string().min(1, "token is required").max(4000, "token: at most 4000 characters"),
});
