import type { Db } from "@edgefleet/db";
import type { Registry } from "prom-client";
import type { Logger } from "../logger.js";
import { DesiredPublisher } from "./desired/desired-publisher.js";
import { HelloService } from "./desired/hello-service.js";
import { createEdgeMetrics } from "./edge-metrics.js";
import { MetricsBatcher } from "./ingest/metrics-batcher.js";
import { MimirWriter } from "./ingest/mimir-writer.js";
import { UpIngestService } from "./ingest/up-ingest-service.js";
import { HeartbeatBatcher } from "./liveness/heartbeat-batcher.js";
import { HeartbeatService } from "./liveness/heartbeat-service.js";
import { OfflineSweeper } from "./liveness/offline-sweeper.js";
import { livenessTiming } from "./liveness/timing.js";
import { NodeDirectory } from "./node-directory.js";
import { Rejections } from "./rejections.js";
import type { EdgeService } from "./service.js";

export type { EdgeService } from "./service.js";

export interface EdgeConfig {
  databaseUrl: string;
  mimirUrl: string;
  heartbeatIntervalS: number;
  metricsIntervalS: number;
  livenessFlushMs: number;
  desiredRescanMs: number;
  /** Metrics batching toward Mimir (defaults: 500 reports or 500 ms). */
  metricsBatch?: { maxBatch: number; maxDelayMs: number };
}

/**
 * The gateway's edge data path (docs/protocol.md): liveness, Hello, desired-state publishing and
 * EF_UP ingest (status, acks, metrics). Start them in order with the platform connection; stop
 * them before NATS drains.
 */
export function createEdgeServices(
  db: Db,
  config: EdgeConfig,
  logger: Logger,
  registry: Registry,
): EdgeService[] {
  const metrics = createEdgeMetrics(registry);
  const rejections = new Rejections(metrics, logger.child({ component: "edge-rejections" }));
  const intake = { directory: new NodeDirectory(db), rejections };
  const timing = livenessTiming(config.heartbeatIntervalS * 1000, config.livenessFlushMs);
  const livenessLogger = logger.child({ component: "liveness" });
  const ingestLogger = logger.child({ component: "up-ingest" });
  return [
    new HeartbeatService(
      intake,
      new HeartbeatBatcher(db, timing, metrics, livenessLogger),
      new OfflineSweeper(db, timing, metrics, livenessLogger),
      metrics,
      livenessLogger,
    ),
    new HelloService(
      db,
      intake,
      { heartbeatIntervalS: config.heartbeatIntervalS, metricsIntervalS: config.metricsIntervalS },
      metrics,
      logger.child({ component: "hello" }),
    ),
    new DesiredPublisher(
      db,
      { databaseUrl: config.databaseUrl, rescanMs: config.desiredRescanMs },
      metrics,
      logger.child({ component: "desired-publisher" }),
    ),
    new UpIngestService(
      db,
      intake,
      new MetricsBatcher(
        db,
        new MimirWriter(config.mimirUrl, metrics),
        config.metricsBatch ?? { maxBatch: 500, maxDelayMs: 500 },
        rejections,
        metrics,
        ingestLogger,
      ),
      metrics,
      ingestLogger,
    ),
  ];
}
