import type { Db } from "@edgefleet/db";
import { Prisma } from "@edgefleet/db";
import type { Logger } from "../logger.js";
import type { AlertingMetrics } from "./alerting-metrics.js";
import type { RelayedAlert } from "./relay.js";
import { type MailSender, type SendResult, sendWebhook } from "./senders.js";
import { type PushOutbox, pushMessageFor } from "./web-push-message.js";
import type { PushResult, WebPushSender } from "./web-push-sender.js";

export interface DeliveryConfig {
  pollMs: number;
  /** Attempts per notification before it is given up (state failed). */
  maxAttempts: number;
  /** Consecutive failed attempts after which a channel is switched off (its queue dropped). */
  disableAfterFailures: number;
  /** Backoff: base × 2^(attempt-1), capped, with full jitter. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  allowPrivateAddresses: boolean;
}

/** Web Push: the sender (VAPID keys) and the secret action tokens are signed with; null: push is off. */
export interface PushDelivery {
  sender: WebPushSender;
  actionSecret: string;
}

interface Claimed {
  id: string;
  organization_id: string;
  channel_id: string;
  alert_status: string;
  alert: RelayedAlert;
  attempts: number;
  kind: string;
  target: string;
  enabled: boolean;
  secret: string | null;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  /** A person's own channel (Web Push device, personal e-mail). */
  user_id: string | null;
  push_endpoint: string | null;
  push_p256dh: string | null;
  push_auth: string | null;
}

const BATCH = 20;
const LEASE_MS = 60_000;

/**
 * Delivers the outbox. Rows are claimed with FOR UPDATE SKIP LOCKED and a lease, so several
 * gateway replicas share the work and a crashed one's rows come back after the lease; each
 * attempt is logged (alert_delivery). A failure is retried with backoff until `maxAttempts`; a
 * channel failing `disableAfterFailures` times in a row is switched off with the reason, and its
 * waiting rows are dropped (an admin re-enables it). The channel kind picks the sender, so Web
 * Push slots in as one more kind.
 */
export class DeliveryWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly mail: MailSender | null,
    private readonly config: DeliveryConfig,
    private readonly metrics: AlertingMetrics,
    private readonly logger: Logger,
    private readonly push: PushDelivery | null = null,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.config.pollMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** Run a pass now (the relay calls this after queueing). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((error: unknown) => this.logger.warn({ err: error }, "alert delivery pass failed"))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Passes until nothing is due (exposed for tests). */
  async drain(): Promise<void> {
    for (;;) {
      const claimed = await this.claim();
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((row) => this.deliver(row)));
    }
  }

  private claim(): Promise<Claimed[]> {
    return this.db.$queryRaw<Claimed[]>(Prisma.sql`
      WITH due AS (
        SELECT id FROM alert_notification
        WHERE state = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
        ORDER BY next_attempt_at
        LIMIT ${BATCH}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE alert_notification n SET lease_until = now() + ${`${LEASE_MS} milliseconds`}::interval
      FROM due, alert_channel c LEFT JOIN push_subscription s ON s.channel_id = c.id
      WHERE n.id = due.id AND c.id = n.channel_id
      RETURNING n.id, n.organization_id, n.channel_id, n.alert_status, n.alert, n.attempts,
                c.kind, c.target, c.enabled, c.secret, c.previous_secret, c.previous_secret_until,
                c.user_id, s.endpoint AS push_endpoint, s.p256dh AS push_p256dh, s.auth AS push_auth`);
  }

  private async deliver(row: Claimed): Promise<void> {
    if (!row.enabled) {
      await this.db.alertNotification.update({
        where: { id: row.id },
        data: { state: "dropped", leaseUntil: null, lastError: "channel disabled" },
      });
      this.metrics.deliveries.inc({ kind: row.kind, result: "dropped" });
      return;
    }
    const started = Date.now();
    const result = await this.send(row);
    const attempt = row.attempts + 1;
    await this.db.alertDelivery.create({
      data: {
        organizationId: row.organization_id,
        notificationId: row.id,
        channelId: row.channel_id,
        attempt,
        ok: result.ok,
        statusCode: result.statusCode,
        error: result.error?.slice(0, 1000) ?? null,
        durationMs: Date.now() - started,
      },
    });
    if ((result as Partial<PushResult>).expired) {
      // The browser unsubscribed or the push service forgot it: the device's channel goes, and
      // with it the subscription, its queue and its log (nothing is left to deliver to).
      await this.db.alertChannel.deleteMany({ where: { id: row.channel_id } });
      this.metrics.deliveries.inc({ kind: row.kind, result: "expired" });
      this.logger.info(
        { channelId: row.channel_id, organizationId: row.organization_id, userId: row.user_id },
        "push subscription expired (404/410): removed",
      );
      return;
    }
    if (result.ok) {
      await this.db.$transaction([
        this.db.alertNotification.update({
          where: { id: row.id },
          data: {
            state: "delivered",
            attempts: attempt,
            deliveredAt: new Date(),
            leaseUntil: null,
            lastError: null,
          },
        }),
        this.db.alertChannel.update({ where: { id: row.channel_id }, data: { consecutiveFailures: 0 } }),
        ...(row.kind === "webpush"
          ? [
              this.db.pushSubscription.updateMany({
                where: { channelId: row.channel_id },
                data: { lastSuccessAt: new Date() },
              }),
            ]
          : []),
      ]);
      this.metrics.deliveries.inc({ kind: row.kind, result: "ok" });
      return;
    }
    const giveUp = result.permanent || attempt >= this.config.maxAttempts;
    await this.db.alertNotification.update({
      where: { id: row.id },
      data: {
        state: giveUp ? "failed" : "pending",
        attempts: attempt,
        lastError: result.error?.slice(0, 1000) ?? null,
        leaseUntil: null,
        nextAttemptAt: new Date(Date.now() + this.backoff(attempt)),
      },
    });
    this.metrics.deliveries.inc({ kind: row.kind, result: giveUp ? "failed" : "retry" });
    if (giveUp)
      this.logger.warn(
        {
          notificationId: row.id,
          channelId: row.channel_id,
          kind: row.kind,
          attempts: attempt,
          error: result.error,
        },
        "alert notification given up",
      );
    const channel = await this.db.alertChannel.update({
      where: { id: row.channel_id },
      data: { consecutiveFailures: { increment: 1 } },
      select: { consecutiveFailures: true, enabled: true },
    });
    if (channel.enabled && channel.consecutiveFailures >= this.config.disableAfterFailures) {
      const reason = `switched off after ${channel.consecutiveFailures} failed deliveries in a row; last: ${result.error ?? "?"}`;
      await this.db.$transaction([
        this.db.alertChannel.update({
          where: { id: row.channel_id },
          data: { enabled: false, disabledReason: reason.slice(0, 1000) },
        }),
        this.db.alertNotification.updateMany({
          where: { channelId: row.channel_id, state: "pending" },
          data: { state: "dropped", lastError: "channel disabled" },
        }),
      ]);
      this.logger.warn(
        { channelId: row.channel_id, organizationId: row.organization_id, reason },
        "alert channel disabled",
      );
    }
  }

  private backoff(attempt: number): number {
    const ceiling = Math.min(this.config.backoffMaxMs, this.config.backoffBaseMs * 2 ** (attempt - 1));
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  private async send(row: Claimed): Promise<SendResult> {
    switch (row.kind) {
      case "webhook": {
        const secrets = [
          row.secret,
          row.previous_secret_until && row.previous_secret_until > new Date() ? row.previous_secret : null,
        ].filter((secret): secret is string => Boolean(secret));
        return sendWebhook(
          row.target,
          { id: row.id, body: webhookBody(row), secrets },
          this.config.allowPrivateAddresses,
        );
      }
      case "email":
        if (!this.mail)
          return {
            ok: false,
            statusCode: null,
            error: "no SMTP server configured (GATEWAY_SMTP_URL)",
            permanent: false,
          };
        return this.mail.send({ to: row.target, messageId: `<${row.id}@alerts.edgefleet>`, ...mailOf(row) });
      case "webpush": {
        if (!this.push)
          return {
            ok: false,
            statusCode: null,
            error: "Web Push is not configured (EDGEFLEET_VAPID_* and EDGEFLEET_PUSH_ACTION_SECRET)",
            permanent: false,
          };
        if (!row.push_endpoint || !row.push_p256dh || !row.push_auth || !row.user_id)
          return { ok: false, statusCode: null, error: "push subscription missing", permanent: true };
        const message = await pushMessageFor(this.db, this.push.actionSecret, row as PushOutbox);
        return this.push.sender.send(
          { endpoint: row.push_endpoint, p256dh: row.push_p256dh, auth: row.push_auth },
          JSON.stringify(message),
          row.alert.labels.severity === "critical",
        );
      }
      default:
        return {
          ok: false,
          statusCode: null,
          error: `channel kind ${row.kind} has no sender yet`,
          permanent: true,
        };
    }
  }
}

/** The JSON a webhook receives (documented in docs/alerts.md). */
export function webhookBody(row: Pick<Claimed, "id" | "organization_id" | "alert_status" | "alert">): string {
  const { alert } = row;
  return JSON.stringify({
    id: row.id,
    type: `alert.${row.alert_status}`,
    organizationId: row.organization_id,
    alert: {
      name: alert.labels.alertname ?? null,
      status: alert.status,
      severity: alert.labels.severity ?? null,
      summary: alert.annotations.summary ?? null,
      consoleUrl: alert.annotations.console_url ?? null,
      startsAt: alert.startsAt,
      endsAt: alert.endsAt ?? null,
      fingerprint: alert.fingerprint,
      labels: alert.labels,
      annotations: alert.annotations,
    },
  });
}

function mailOf(row: Claimed): { subject: string; text: string } {
  const { alert } = row;
  const state = alert.status === "firing" ? "FIRING" : "RESOLVED";
  const summary = alert.annotations.summary ?? alert.labels.alertname ?? "alert";
  const labels = Object.entries(alert.labels)
    .map(([key, value]) => `  ${key}: ${value}`)
    .join("\n");
  return {
    subject: `[${state} ${alert.labels.severity ?? ""}] ${summary}`.replace(/\s+/g, " ").trim(),
    text: [
      summary,
      "",
      alert.annotations.console_url ? `Open in Edgefleet: ${alert.annotations.console_url}` : null,
      `Policy: ${alert.annotations.policy_name ?? alert.labels.policy ?? "?"}`,
      `Since: ${alert.startsAt}`,
      "",
      "Labels:",
      labels,
    ]
      .filter((line) => line !== null)
      .join("\n"),
  };
}
