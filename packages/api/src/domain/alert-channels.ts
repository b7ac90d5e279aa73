/**
 * Where an organization's alerts go (issue 12): signed webhooks and e-mail addresses, with the
 * delivery log the gateway's relay writes. A webhook's signing secret (Standard Webhooks,
 * `whsec_…`) is shown once, at creation and at rotation; rotation keeps the previous secret
 * signing for a day so a receiver can switch without losing a message.
 */
import { randomBytes } from "node:crypto";
import { ALERT_SEVERITIES, webhookUrlProblem } from "@edgefleet/alerts";
import { Prisma } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import {
  alertChannelIdInput,
  alertDeliveriesInput,
  createAlertChannelInput,
  updateAlertChannelInput,
} from "../schemas/alerts";
import { fieldError } from "./field-error";
import type { TenantDb } from "./nodes";

export { alertChannelIdInput, alertDeliveriesInput, createAlertChannelInput, updateAlertChannelInput };

/** How long the previous webhook secret keeps signing after a rotation. */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 3600_000;

export const alertChannelOutput = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.string(),
  target: z.string(),
  minSeverity: z.enum(ALERT_SEVERITIES),
  enabled: z.boolean(),
  disabledReason: z.string().nullable(),
  consecutiveFailures: z.number().int(),
  /** While a rotation overlaps: until when the previous secret still signs. */
  previousSecretUntil: z.date().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type AlertChannelOutput = z.infer<typeof alertChannelOutput>;

/** A channel with its new signing secret (webhooks; shown this once). */
export const alertChannelWithSecretOutput = alertChannelOutput.extend({ secret: z.string().nullable() });

const channelSelect = {
  id: true,
  name: true,
  kind: true,
  target: true,
  minSeverity: true,
  enabled: true,
  disabledReason: true,
  consecutiveFailures: true,
  previousSecretUntil: true,
  createdAt: true,
  updatedAt: true,
} as const;

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export async function listAlertChannels(db: TenantDb): Promise<AlertChannelOutput[]> {
  // People's own channels (their Web Push devices, their e-mail) are theirs: alert.pushSubscriptions.
  return db.alertChannel.findMany({
    where: { userId: null },
    orderBy: { name: "asc" },
    select: channelSelect,
  });
}

export async function getAlertChannel(db: TenantDb, id: string): Promise<AlertChannelOutput> {
  const row = await db.alertChannel.findFirst({ where: { id, userId: null }, select: channelSelect });
  if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `alert channel ${id} not found` });
  return row;
}

function nameTaken(error: unknown, name: string | undefined): never {
  if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
    fieldError(["name"], `an alert channel named "${name}" already exists`);
  }
  throw error;
}

/**
 * Creates a channel. A webhook URL that is not http(s) or names a loopback, private or local
 * address is refused, naming `target` (the relay sits inside the control plane).
 * `allowPrivateAddresses` is for tests whose receiver listens on loopback.
 */
export async function createAlertChannel(
  db: TenantDb,
  organizationId: string,
  input: z.output<typeof createAlertChannelInput>,
  options: { allowPrivateAddresses?: boolean } = {},
): Promise<z.infer<typeof alertChannelWithSecretOutput>> {
  if (input.kind === "webhook") {
    const problem = webhookUrlProblem(input.target, options);
    if (problem) fieldError(["target"], `webhook URL refused: ${problem}`);
  }
  const secret = input.kind === "webhook" ? newWebhookSecret() : null;
  try {
    const row = await db.alertChannel.create({
      data: {
        organizationId,
        name: input.name,
        kind: input.kind,
        target: input.target,
        minSeverity: input.minSeverity,
        secret,
      },
      select: channelSelect,
    });
    return { ...row, secret };
  } catch (error) {
    nameTaken(error, input.name);
  }
}

export async function updateAlertChannel(db: TenantDb, input: z.output<typeof updateAlertChannelInput>) {
  const before = await getAlertChannel(db, input.id);
  try {
    await db.alertChannel.update({
      where: { id: input.id },
      data: {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.minSeverity !== undefined ? { minSeverity: input.minSeverity } : {}),
        // Re-enabling starts the failure count afresh.
        ...(input.enabled !== undefined
          ? {
              enabled: input.enabled,
              disabledReason: null,
              ...(input.enabled ? { consecutiveFailures: 0 } : {}),
            }
          : {}),
      },
    });
  } catch (error) {
    nameTaken(error, input.name);
  }
  return { before, after: await getAlertChannel(db, input.id) };
}

/** A new signing secret; the previous one keeps signing for SECRET_ROTATION_OVERLAP_MS. */
export async function rotateWebhookSecret(db: TenantDb, id: string, now = new Date()) {
  const channel = await db.alertChannel.findFirst({
    where: { id, userId: null },
    select: { kind: true, secret: true },
  });
  if (!channel) throw new TRPCError({ code: "NOT_FOUND", message: `alert channel ${id} not found` });
  if (channel.kind !== "webhook") fieldError(["id"], "only webhook channels have a signing secret");
  const secret = newWebhookSecret();
  await db.alertChannel.update({
    where: { id },
    data: {
      secret,
      previousSecret: channel.secret,
      previousSecretUntil: new Date(now.getTime() + SECRET_ROTATION_OVERLAP_MS),
    },
  });
  return { ...(await getAlertChannel(db, id)), secret };
}

export async function deleteAlertChannel(db: TenantDb, id: string) {
  const before = await getAlertChannel(db, id);
  await db.alertChannel.delete({ where: { id } });
  return before;
}

export const alertDeliveryOutput = z.object({
  id: z.string(),
  channelId: z.string(),
  notificationId: z.string(),
  attempt: z.number().int(),
  ok: z.boolean(),
  statusCode: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number().int(),
  at: z.date(),
});

/** The delivery log, newest first. */
export async function listAlertDeliveries(db: TenantDb, input: z.output<typeof alertDeliveriesInput>) {
  const rows = await db.alertDelivery.findMany({
    where: input.channelId ? { channelId: input.channelId } : {},
    orderBy: { id: "desc" },
    take: input.limit,
  });
  return rows.map(({ id, organizationId: _org, ...row }) => ({ ...row, id: String(id) }));
}
