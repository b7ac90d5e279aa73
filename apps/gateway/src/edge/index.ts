import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONNECT_TO_ONLINE_SERIES, OrgHistograms } from "@edgefleet/alerts";
import type { Db } from "@edgefleet/db";
import type { TenancySecrets } from "@edgefleet/nats-tenancy";
import { jetstream } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import type { Registry } from "prom-client";
import type { Logger } from "../logger.js";
import { SiteUplinkPacer } from "../sites/uplink-pacer.js";
import { ArtifactAccess } from "./artifacts/artifact-access.js";
import { ArtifactCache } from "./artifacts/artifact-cache.js";
import { ChunkReplies } from "./artifacts/chunk-replies.js";
import { ArtifactChunkService } from "./artifacts/chunk-service.js";
import { type AccountDirectory, CredentialIssuer } from "./credentials/credential-issuer.js";
import { CredentialsPusher } from "./credentials/credentials-pusher.js";
import { Downlinks } from "./credentials/downlinks.js";
import { DesiredPublisher } from "./desired/desired-publisher.js";
import { HelloService } from "./desired/hello-service.js";
import { createEdgeMetrics } from "./edge-metrics.js";
import { MetricsBatcher } from "./ingest/metrics-batcher.js";
import { MimirWriter } from "./ingest/mimir-writer.js";
import { UpIngestService } from "./ingest/up-ingest-service.js";
import { DisconnectWatcher, type DisconnectWatcherOptions } from "./liveness/disconnect-watcher.js";
import { HeartbeatBatcher } from "./liveness/heartbeat-batcher.js";
import { HeartbeatService } from "./liveness/heartbeat-service.js";
import { OfflineSweeper } from "./liveness/offline-sweeper.js";
import { livenessTiming } from "./liveness/timing.js";
import { NodeDirectory, nodeDirectoryFeeds } from "./node-directory.js";
import { Rejections } from "./rejections.js";
import type { EdgeService } from "./service.js";
import { SloPublisher } from "./slo-publisher.js";

/** Encoded chunk replies kept in memory by default: 64 MiB, 512 chunks of 128 KiB. */
const DEFAULT_CHUNK_REPLY_BYTES = 64 * 1024 ** 2;

export type { EdgeService } from "./service.js";

export interface EdgeConfig {
  databaseUrl: string;
  mimirUrl: string;
  heartbeatIntervalS: number;
  metricsIntervalS: number;
  livenessFlushMs: number;
  /**
   * The servers' DISCONNECT events (system account): nodes go offline within the grace of their
   * connection closing. Absent (no NATS_SYSTEM_CREDS): the heartbeat bound only.
   */
  disconnects?: DisconnectWatcherOptions | undefined;
  desiredRescanMs: number;
  /** Metrics batching toward Mimir (defaults: 500 reports or 500 ms). */
  metricsBatch?: { maxBatch: number; maxDelayMs: number };
  /**
   * Disk cache of artifacts served to nodes (default: `<tmpdir>/edgefleet-gateway-artifacts`, 2 GiB)
   * and the memory kept for encoded chunk replies (`memoryBytes`, default 64 MiB).
   */
  artifactCache?: { dir: string; maxBytes: number; maxArtifactBytes?: number; memoryBytes?: number };
  /** Replicas of EF_UP: the hub's JetStream cluster size, at most 3 (HubReplicas). */
  streamReplicas: () => Promise<number>;
  /**
   * The tenancy secrets and the organizations' accounts: node downlinks of subject layout 2 are
   * derived from the secrets, and nodes on subjects that are not their current ones get new
   * credentials. Without them (no NATS_TENANCY_FILE) only nodes of layout 1 can be served.
   */
  credentials?: { secrets: TenancySecrets; accounts: AccountDirectory } | undefined;
}

/**
 * The gateway's edge data path (docs/protocol.md): liveness, Hello, desired-state publishing,
 * EF_UP ingest (status, acks, metrics) and artifact chunks. Start them in order with the platform connection; stop
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
  const directory = new NodeDirectory(db);
  const intake = { directory, rejections };
  const downlinks = new Downlinks(config.credentials?.secrets ?? null);
  const issuer = config.credentials
    ? new CredentialIssuer(db, config.credentials.secrets, config.credentials.accounts)
    : null;
  const timing = livenessTiming(config.heartbeatIntervalS * 1000, config.livenessFlushMs);
  const livenessLogger = logger.child({ component: "liveness" });
  const ingestLogger = logger.child({ component: "up-ingest" });
  // The object store client is made on the platform connection when the services start.
  let objm: Objm | undefined;
  const artifactCache = new ArtifactCache(
    config.artifactCache ?? {
      dir: join(tmpdir(), "edgefleet-gateway-artifacts"),
      maxBytes: 2 * 1024 ** 3,
    },
    () => {
      if (!objm) throw new Error("artifact cache used before the platform connection");
      return objm;
    },
    (result) => metrics.artifactCacheFills.inc({ result }),
  );
  const mimirWriter = new MimirWriter(config.mimirUrl, metrics);
  const connectToOnline = new OrgHistograms(CONNECT_TO_ONLINE_SERIES);
  // Heartbeats and metrics reports both say a node is alive (an agent skips its heartbeat while
  // reports flow): one batcher for both.
  const heartbeats = new HeartbeatBatcher(db, timing, metrics, livenessLogger);
  const upIngest = new UpIngestService(
    db,
    intake,
    new MetricsBatcher(
      db,
      mimirWriter,
      config.metricsBatch ?? { maxBatch: 500, maxDelayMs: 500 },
      rejections,
      metrics,
      ingestLogger,
      (nodeId, storedAt) => heartbeats.seenAt(nodeId, storedAt),
    ),
    metrics,
    ingestLogger,
    config.streamReplicas,
  );
  return [
    ...nodeDirectoryFeeds(directory, config.databaseUrl, logger),
    new HeartbeatService(
      intake,
      heartbeats,
      new OfflineSweeper(db, timing, metrics, livenessLogger, () => upIngest.ingestedUpTo()),
      metrics,
      livenessLogger,
    ),
    ...(config.disconnects ? [new DisconnectWatcher(db, config.disconnects, metrics, livenessLogger)] : []),
    new HelloService(
      db,
      intake,
      { heartbeatIntervalS: config.heartbeatIntervalS, metricsIntervalS: config.metricsIntervalS },
      metrics,
      logger.child({ component: "hello" }),
      connectToOnline,
      issuer,
    ),
    new DesiredPublisher(
      db,
      { databaseUrl: config.databaseUrl, rescanMs: config.desiredRescanMs },
      metrics,
      logger.child({ component: "desired-publisher" }),
      downlinks,
      issuer
        ? new CredentialsPusher(db, issuer, downlinks, metrics, logger.child({ component: "credentials" }))
        : null,
    ),
    upIngest,
    {
      name: "artifact-store",
      async start(platform) {
        objm = new Objm(jetstream(platform, { domain: "hub" }));
      },
      async stop() {},
    },
    new SloPublisher([connectToOnline], mimirWriter, logger.child({ component: "slo-series" })),
    new ArtifactChunkService(
      intake,
      new ArtifactAccess(db),
      artifactCache,
      new ChunkReplies(config.artifactCache?.memoryBytes ?? DEFAULT_CHUNK_REPLY_BYTES),
      metrics,
      logger.child({ component: "artifact-chunks" }),
      new SiteUplinkPacer(db),
    ),
  ];
}
