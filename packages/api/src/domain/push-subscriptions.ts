/**
 * A person's Web Push devices and notification preferences in one organization (issue 12).
 * Each subscribed device is a personal delivery channel (alert_channel, kind webpush, user_id
 * set) owning its push_subscription row: the relay's outbox, retries and delivery log work for
 * it exactly as for webhooks. Only the person sees or removes their own devices.
 */
import { ALERT_SEVERITIES, webhookUrlProblem } from "@edgefleet/alerts";
import type { Db } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { notificationPreferencesInput, pushSubscriptionIdInput, subscribePushInput } from "../schemas/push";
import { fieldError } from "./field-error";
import type { TenantDb } from "./nodes";

export { notificationPreferencesInput, pushSubscriptionIdInput, subscribePushInput };

export const pushSubscriptionOutput = z.object({
  id: z.string(),
  /** The push service's host only: the full endpoint is a capability and stays server-side. */
  pushService: z.string(),
  userAgent: z.string().nullable(),
  enabled: z.boolean(),
  disabledReason: z.string().nullable(),
  lastSuccessAt: z.date().nullable(),
  createdAt: z.date(),
});
export type PushSubscriptionOutput = z.infer<typeof pushSubscriptionOutput>;

export const notificationPreferencesOutput = z.object({
  pushSeverities: z.array(z.enum(ALERT_SEVERITIES)),
  emailSeverities: z.array(z.enum(ALERT_SEVERITIES)),
  /** Where personal e-mail goes (the person's account address). */
  email: z.string(),
});

const subscriptionSelect = {
  id: true,
  endpoint: true,
  userAgent: true,
  lastSuccessAt: true,
  createdAt: true,
  channel: { select: { enabled: true, disabledReason: true } },
} as const;

function toOutput(row: {
  id: string;
  endpoint: string;
  userAgent: string | null;
  lastSuccessAt: Date | null;
  createdAt: Date;
  channel: { enabled: boolean; disabledReason: string | null };
}): PushSubscriptionOutput {
  return {
    id: row.id,
    pushService: new URL(row.endpoint).host,
    userAgent: row.userAgent,
    enabled: row.channel.enabled,
    disabledReason: row.channel.disabledReason,
    lastSuccessAt: row.lastSuccessAt,
    createdAt: row.createdAt,
  };
}

/**
 * Subscribes (or re-subscribes) this browser for the person. The endpoint is where the gateway
 * will POST, so like a webhook URL it must not name the control plane's own addresses
 * (`allowPrivateAddresses`: tests). Subscribing the same endpoint again updates its keys; an
 * endpoint another member of the organization had on this browser moves to the person now
 * signed in (the device is theirs now).
 */
export async function subscribePush(
  db: TenantDb,
  organizationId: string,
  userId: string,
  input: z.output<typeof subscribePushInput>,
  options: { allowPrivateAddresses?: boolean } = {},
): Promise<PushSubscriptionOutput> {
  const problem = webhookUrlProblem(input.endpoint, options);
  if (problem) fieldError(["endpoint"], `push endpoint refused: ${problem}`);
  const existing = await db.pushSubscription.findFirst({
    where: { endpoint: input.endpoint },
    select: { id: true, userId: true, channelId: true },
  });
  if (existing && existing.userId !== userId) {
    await db.alertChannel.delete({ where: { id: existing.channelId } });
  } else if (existing) {
    const row = await db.pushSubscription.update({
      where: { id: existing.id },
      data: { p256dh: input.keys.p256dh, auth: input.keys.auth, userAgent: input.userAgent ?? null },
      select: subscriptionSelect,
    });
    // A device the relay switched off after failures works again once its browser re-subscribes.
    await db.alertChannel.update({
      where: { id: existing.channelId },
      data: { enabled: true, disabledReason: null, consecutiveFailures: 0 },
    });
    return toOutput({ ...row, channel: { enabled: true, disabledReason: null } });
  }
  const channel = await db.alertChannel.create({
    data: {
      organizationId,
      userId,
      kind: "webpush",
      // Unique per organization like every channel name; people never see it.
      name: `web-push:${crypto.randomUUID()}`,
      target: new URL(input.endpoint).host,
      minSeverity: "info",
    },
    select: { id: true },
  });
  const row = await db.pushSubscription.create({
    data: {
      organizationId,
      userId,
      channelId: channel.id,
      endpoint: input.endpoint,
      p256dh: input.keys.p256dh,
      auth: input.keys.auth,
      userAgent: input.userAgent ?? null,
    },
    select: subscriptionSelect,
  });
  return toOutput(row);
}

export async function listOwnPushSubscriptions(
  db: TenantDb,
  userId: string,
): Promise<PushSubscriptionOutput[]> {
  const rows = await db.pushSubscription.findMany({
    where: { userId },
    orderBy: { createdAt: "desc" },
    select: subscriptionSelect,
  });
  return rows.map(toOutput);
}

/** Removes one of the person's own devices (another person's id is NOT_FOUND, as if absent). */
export async function unsubscribePush(
  db: TenantDb,
  userId: string,
  id: string,
): Promise<PushSubscriptionOutput> {
  const row = await db.pushSubscription.findFirst({
    where: { id, userId },
    select: { ...subscriptionSelect, channelId: true },
  });
  if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `push subscription ${id} not found` });
  await db.alertChannel.delete({ where: { id: row.channelId } });
  return toOutput(row);
}

export async function getNotificationPreferences(db: TenantDb, userId: string) {
  const membership = await db.membership.findFirst({
    where: { userId },
    select: { pushSeverities: true, emailSeverities: true, user: { select: { email: true } } },
  });
  if (!membership) throw new TRPCError({ code: "NOT_FOUND", message: "not a member of this organization" });
  return {
    pushSeverities: membership.pushSeverities,
    emailSeverities: membership.emailSeverities,
    email: membership.user.email,
  };
}

/**
 * Stores the person's choices. E-mail to the person is a personal channel (kind email, their
 * account address) that exists while they want any severity by e-mail.
 */
export async function updateNotificationPreferences(
  db: Db,
  tenant: TenantDb,
  organizationId: string,
  userId: string,
  input: z.output<typeof notificationPreferencesInput>,
) {
  const before = await getNotificationPreferences(tenant, userId);
  await db.membership.update({
    where: { organizationId_userId: { organizationId, userId } },
    data: { pushSeverities: input.pushSeverities, emailSeverities: input.emailSeverities },
  });
  const personalMail = await tenant.alertChannel.findFirst({
    where: { userId, kind: "email" },
    select: { id: true },
  });
  if (input.emailSeverities.length > 0 && !personalMail) {
    await tenant.alertChannel.create({
      data: {
        organizationId,
        userId,
        kind: "email",
        name: `personal-email:${userId}`,
        target: before.email,
        minSeverity: "info",
      },
    });
  } else if (input.emailSeverities.length === 0 && personalMail) {
    await tenant.alertChannel.delete({ where: { id: personalMail.id } });
  }
  return { before, after: await getNotificationPreferences(tenant, userId) };
}
