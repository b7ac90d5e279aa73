import type { IncomingMessage } from "node:http";
import { DEFAULT_TIMINGS, type SeverityTimings } from "@edgefleet/alerts";
import type { Db } from "@edgefleet/db";
import type { Registry } from "prom-client";
import type { GatewayEnv } from "../env.js";
import type { Logger } from "../logger.js";
import { createAlertingMetrics } from "./alerting-metrics.js";
import { AlertingReconciler } from "./alerting-reconciler.js";
import { DeliveryWorker } from "./delivery-worker.js";
import { AdvisoryLeader } from "./leader.js";
import { MimirAlerting } from "./mimir-alerting.js";
import { NodeSeriesPublisher } from "./node-series-publisher.js";
import { OutboxCleanup } from "./outbox-cleanup.js";
import { handleRelayRequest, RELAY_PREFIX } from "./relay.js";
import { RolloutEventAlerts } from "./rollout-event-alerts.js";
import { MailSender } from "./senders.js";
import { WebPushSender } from "./web-push-sender.js";

export { RELAY_PREFIX };

/** Arbitrary and fixed: the advisory lock of the alerting leader (reconciler and series). */
const ALERTING_LOCK_KEY = 0x0a1e_47;

export type Alerting = ReturnType<typeof createAlerting>;

/**
 * The gateway's alerting (issue 12): Mimir ruler/Alertmanager reconciliation, the series rules
 * join on and rollout event alerts (one leader replica), the relay endpoint and outbox delivery
 * (every replica).
 */
export function createAlerting(
  db: Db,
  env: GatewayEnv,
  relaySecret: string,
  logger: Logger,
  registry: Registry,
) {
  const metrics = createAlertingMetrics(registry);
  const leader = new AdvisoryLeader(env.DATABASE_URL, ALERTING_LOCK_KEY);
  const timings = overrideTimings(env.GATEWAY_ALERT_GROUP_WAIT_S, env.GATEWAY_ALERT_GROUP_INTERVAL_S);
  const mimir = new MimirAlerting(env.MIMIR_URL);
  const reconciler = new AlertingReconciler(
    db,
    mimir,
    leader,
    {
      relayUrl: env.GATEWAY_ALERT_RELAY_URL ?? `http://127.0.0.1:${env.GATEWAY_HTTP_PORT}`,
      relaySecret,
      consoleUrl: env.GATEWAY_CONSOLE_URL,
      evaluationInterval: `${env.GATEWAY_ALERT_EVALUATION_INTERVAL_S}s`,
      timings,
      syncMs: env.GATEWAY_ALERT_SYNC_MS,
      driftCheckMs: env.GATEWAY_ALERT_DRIFT_CHECK_MS,
    },
    metrics,
    logger.child({ component: "alerting-reconciler" }),
  );
  const publisher = new NodeSeriesPublisher(
    db,
    env.MIMIR_URL,
    leader,
    env.GATEWAY_ALERT_SERIES_INTERVAL_MS,
    metrics,
    logger.child({ component: "alert-series" }),
  );
  const rolloutEvents = new RolloutEventAlerts(
    db,
    mimir,
    leader,
    {
      pollMs: env.GATEWAY_ALERT_EVENT_POLL_MS,
      consoleUrl: env.GATEWAY_CONSOLE_URL,
      ttlMs: 3_600_000,
      lookbackMs: 15 * 60_000,
    },
    logger.child({ component: "rollout-event-alerts" }),
  );
  const mail = env.GATEWAY_SMTP_URL
    ? new MailSender(env.GATEWAY_SMTP_URL, env.GATEWAY_ALERT_MAIL_FROM)
    : null;
  const pushSender =
    env.EDGEFLEET_VAPID_PUBLIC_KEY && env.EDGEFLEET_VAPID_PRIVATE_KEY && env.EDGEFLEET_PUSH_ACTION_SECRET
      ? new WebPushSender(
          {
            subject: env.EDGEFLEET_VAPID_SUBJECT,
            publicKey: env.EDGEFLEET_VAPID_PUBLIC_KEY,
            privateKey: env.EDGEFLEET_VAPID_PRIVATE_KEY,
          },
          env.GATEWAY_ALERT_WEBHOOK_ALLOW_PRIVATE,
        )
      : null;
  if (!pushSender) logger.warn("EDGEFLEET_VAPID_* or EDGEFLEET_PUSH_ACTION_SECRET not set: Web Push is off");
  const worker = new DeliveryWorker(
    db,
    mail,
    {
      pollMs: env.GATEWAY_ALERT_DELIVERY_POLL_MS,
      maxAttempts: env.GATEWAY_ALERT_MAX_ATTEMPTS,
      disableAfterFailures: env.GATEWAY_ALERT_DISABLE_AFTER_FAILURES,
      backoffBaseMs: env.GATEWAY_ALERT_BACKOFF_BASE_MS,
      backoffMaxMs: env.GATEWAY_ALERT_BACKOFF_MAX_MS,
      allowPrivateAddresses: env.GATEWAY_ALERT_WEBHOOK_ALLOW_PRIVATE,
    },
    metrics,
    logger.child({ component: "alert-delivery" }),
    pushSender && env.EDGEFLEET_PUSH_ACTION_SECRET
      ? { sender: pushSender, actionSecret: env.EDGEFLEET_PUSH_ACTION_SECRET }
      : null,
  );
  const cleanup = new OutboxCleanup(
    db,
    leader,
    {
      retentionMs: env.GATEWAY_ALERT_RETENTION_HOURS * 3_600_000,
      intervalMs: env.GATEWAY_ALERT_CLEANUP_INTERVAL_MS,
    },
    metrics,
    logger.child({ component: "alert-outbox-cleanup" }),
  );
  const relayLogger = logger.child({ component: "alert-relay" });
  return {
    metrics,
    reconciler,
    publisher,
    rolloutEvents,
    worker,
    cleanup,
    /** The relay's HTTP handler (mounted under RELAY_PREFIX by the HTTP server). */
    relay: (req: IncomingMessage, path: string) =>
      handleRelayRequest(
        { db, secret: relaySecret, metrics, logger: relayLogger, onQueued: () => worker.wake() },
        req,
        path,
      ),
    start(): void {
      reconciler.start();
      publisher.start();
      rolloutEvents.start();
      worker.start();
      cleanup.start();
    },
    async stop(): Promise<void> {
      await Promise.all([
        reconciler.stop(),
        publisher.stop(),
        rolloutEvents.stop(),
        worker.stop(),
        cleanup.stop(),
      ]);
      mail?.close();
      pushSender?.close();
      await leader.release();
    },
  };
}

function overrideTimings(groupWaitS: number | undefined, groupIntervalS: number | undefined) {
  const timings = structuredClone(DEFAULT_TIMINGS);
  for (const timing of Object.values(timings) as SeverityTimings[]) {
    if (groupWaitS !== undefined) timing.groupWait = `${groupWaitS}s`;
    if (groupIntervalS !== undefined) timing.groupInterval = `${groupIntervalS}s`;
  }
  return timings;
}
