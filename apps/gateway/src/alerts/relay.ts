import type { IncomingMessage } from "node:http";
import { ALERT_SEVERITIES, type AlertSeverity, relayTokenMatches } from "@edgefleet/alerts";
import { type Db, Prisma } from "@edgefleet/db";
import { z } from "zod";
import type { Logger } from "../logger.js";
import type { AlertingMetrics } from "./alerting-metrics.js";

export const RELAY_PREFIX = "/alerts/relay/";
const MAX_BODY_BYTES = 4 * 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Alertmanager's webhook payload (version 4); only what the relay reads. */
const alertSchema = z.object({
  status: z.enum(["firing", "resolved"]),
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()).default({}),
  startsAt: z.string(),
  endsAt: z.string().optional(),
  fingerprint: z.string().min(1).max(64),
});
const webhookSchema = z.object({ version: z.string(), alerts: z.array(alertSchema).max(10_000) });
export type RelayedAlert = z.infer<typeof alertSchema>;

const RANK: Record<AlertSeverity, number> = { info: 0, warning: 1, critical: 2 };

export function severityOf(labels: Record<string, string>): AlertSeverity {
  const value = labels.severity;
  return (ALERT_SEVERITIES as readonly string[]).includes(value ?? "") ? (value as AlertSeverity) : "warning";
}

/**
 * Alertmanager re-sends a group on every group_interval change and repeat_interval, and again
 * when the relay answered an error: one alert state change (fingerprint, status, start) is one
 * delivery per channel, whatever the number of re-sends.
 */
export function idempotencyKey(alert: RelayedAlert): string {
  return `${alert.fingerprint}:${alert.status}:${alert.startsAt}`;
}

/**
 * A person's own channel (a Web Push device, their e-mail) gets only the severities they chose
 * for that medium (membership preferences). The membership is part of the channel's key, so a
 * person who left the organization has no channels left to deliver to.
 */
export function wantedByPerson(
  channel: {
    kind: string;
    userId: string | null;
    membership: { pushSeverities: AlertSeverity[]; emailSeverities: AlertSeverity[] } | null;
  },
  severity: AlertSeverity,
): boolean {
  if (channel.userId === null) return true;
  if (!channel.membership) return false;
  const wanted =
    channel.kind === "webpush" ? channel.membership.pushSeverities : channel.membership.emailSeverities;
  return wanted.includes(severity);
}

export interface RelayDeps {
  db: Db;
  secret: string;
  metrics: AlertingMetrics;
  logger: Logger;
  /** Wakes the delivery worker after new rows are committed. */
  onQueued: () => void;
}

/**
 * POST /alerts/relay/{organizationId} from the organization's Alertmanager. The bearer token
 * must be the one derived for that organization, and each alert's `organization` label must
 * name it too (anything else is refused and counted). Alerts are written to the outbox, one row
 * per channel that wants their severity, before the 200: Alertmanager retries until then.
 */
export async function handleRelayRequest(
  deps: RelayDeps,
  req: IncomingMessage,
  path: string,
): Promise<{ status: number; body: unknown }> {
  const organizationId = path.slice(RELAY_PREFIX.length);
  if (!UUID.test(organizationId)) return { status: 404, body: { error: "no such relay endpoint" } };
  if (req.method !== "POST") return { status: 405, body: { error: "use POST" } };
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
  if (!bearer || !relayTokenMatches(deps.secret, organizationId, bearer)) {
    deps.metrics.relayed.inc({ outcome: "unauthorized" });
    return { status: 401, body: { error: "relay token missing or not this organization's" } };
  }
  let payload: z.infer<typeof webhookSchema>;
  try {
    payload = webhookSchema.parse(JSON.parse(await readBody(req)));
  } catch (error) {
    return {
      status: 400,
      body: {
        error: `not an Alertmanager webhook payload: ${error instanceof Error ? error.message.slice(0, 300) : error}`,
      },
    };
  }
  // A device's channel can be removed (its push service said 410) between reading the channels
  // and writing the rows: the write then fails on its foreign key, and the rows are built again.
  let outcome = await queueForChannels(deps.db, organizationId, payload.alerts);
  for (let attempt = 1; outcome === "channel_gone" && attempt < 3; attempt++)
    outcome = await queueForChannels(deps.db, organizationId, payload.alerts);
  if (outcome === "channel_gone") throw new Error("alert channels kept disappearing while queueing");
  const { count, rows, refused } = outcome;
  deps.metrics.relayed.inc({ outcome: "queued" }, count);
  deps.metrics.relayed.inc({ outcome: "duplicate" }, rows.length - count);
  deps.metrics.relayed.inc({ outcome: "refused" }, refused);
  if (refused > 0)
    deps.logger.warn({ organizationId, refused }, "alerts naming another organization refused by the relay");
  if (count > 0) deps.onQueued();
  return { status: 200, body: { queued: count, duplicates: rows.length - count, refused } };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error(`body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Writes one outbox row per alert and channel that wants it; "channel_gone" when a channel vanished meanwhile. */
async function queueForChannels(
  db: Db,
  organizationId: string,
  alerts: z.infer<typeof webhookSchema>["alerts"],
): Promise<{ count: number; rows: unknown[]; refused: number } | "channel_gone"> {
  const channels = await db.alertChannel.findMany({
    where: { organizationId, enabled: true },
    select: {
      id: true,
      kind: true,
      minSeverity: true,
      userId: true,
      membership: { select: { pushSeverities: true, emailSeverities: true } },
    },
  });
  const rows = [];
  let refused = 0;
  for (const alert of alerts) {
    if (alert.labels.organization !== organizationId) {
      refused++;
      continue;
    }
    const severity = severityOf(alert.labels);
    for (const channel of channels) {
      if (RANK[severity] < RANK[channel.minSeverity]) continue;
      if (!wantedByPerson(channel, severity)) continue;
      rows.push({
        organizationId,
        channelId: channel.id,
        idempotencyKey: idempotencyKey(alert),
        alertStatus: alert.status,
        alert,
      });
    }
  }
  let count = 0;
  try {
    if (rows.length > 0)
      ({ count } = await db.alertNotification.createMany({ data: rows, skipDuplicates: true }));
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2003")
      return "channel_gone";
    throw error;
  }
  return { count, rows, refused };
}
