import { Counter, Gauge, type Registry } from "prom-client";
import { METRIC_PREFIX } from "../metrics.js";

export type AlertingMetrics = ReturnType<typeof createAlertingMetrics>;

/** What the alerting loops and the relay report on /metrics. */
export function createAlertingMetrics(registry: Registry) {
  const registers = [registry];
  return {
    syncs: new Counter({
      name: `${METRIC_PREFIX}alerting_syncs_total`,
      help: "Organizations reconciled with Mimir's ruler and Alertmanager, by result (ok, error)",
      labelNames: ["result"] as const,
      registers,
    }),
    driftRepairs: new Counter({
      name: `${METRIC_PREFIX}alerting_drift_repairs_total`,
      help: "Times Mimir held rules or an Alertmanager config other than the applied ones and was rewritten",
      registers,
    }),
    outOfSync: new Gauge({
      name: `${METRIC_PREFIX}alerting_out_of_sync_organizations`,
      help: "Organizations whose Mimir alerting config is not (yet) what their policies say, or failed to apply",
      registers,
    }),
    relayed: new Counter({
      name: `${METRIC_PREFIX}alert_relay_alerts_total`,
      help: "Alerts received from Alertmanager by the relay, by outcome (queued, duplicate, refused)",
      labelNames: ["outcome"] as const,
      registers,
    }),
    deliveries: new Counter({
      name: `${METRIC_PREFIX}alert_deliveries_total`,
      help: "Delivery attempts by channel kind and result (ok, retry, failed, dropped, expired: a push subscription gone)",
      labelNames: ["kind", "result"] as const,
      registers,
    }),
    outboxDeleted: new Counter({
      name: `${METRIC_PREFIX}alert_outbox_deleted_total`,
      help: "Finished alert notifications deleted from the outbox after the retention",
      registers,
    }),
    seriesWrites: new Counter({
      name: `${METRIC_PREFIX}alerting_series_writes_total`,
      help: "Node info/liveness series writes to Mimir, by result",
      labelNames: ["result"] as const,
      registers,
    }),
  };
}
