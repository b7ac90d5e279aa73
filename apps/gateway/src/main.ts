import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { TenancySecrets } from "@edgefleet/nats-tenancy";
import { jetstream } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import { createAlerting } from "./alerts/index.js";
import { ArtifactService } from "./artifacts/artifact-service.js";
import { ArtifactBuckets } from "./artifacts/bucket.js";
import { ArtifactImporter } from "./artifacts/importer.js";
import { createGatewayDatabase } from "./db.js";
import { ArtifactCache } from "./edge/artifacts/artifact-cache.js";
import { LogSessionService } from "./edge/commands/log-sessions.js";
import { NodeCommandService } from "./edge/commands/node-command-service.js";
import { Downlinks } from "./edge/credentials/downlinks.js";
import { createEdgeServices } from "./edge/index.js";
import { createEnrollment, enrollmentConfigFromEnv } from "./enrollment/index.js";
import { loadGatewayEnvOrExit } from "./env.js";
import { DependencyHealth } from "./health/dependency-health.js";
import { createMimirProbe } from "./health/mimir.js";
import { NatsHub } from "./health/nats.js";
import { createPostgresProbe } from "./health/postgres.js";
import { ProbeLoop } from "./health/probe-loop.js";
import { createHttpServer } from "./http/server.js";
import { HubReplicas } from "./hub-replicas.js";
import { createLogger } from "./logger.js";
import { createGatewayMetrics } from "./metrics.js";
import { RolloutController } from "./rollouts/rollout-controller.js";
import { RolloutSiteCachePrep } from "./rollouts/site-cache-prep.js";
import { installShutdown } from "./shutdown.js";
import { createLeafBundle } from "./sites/leaf-bundle.js";
import { SiteCacheSeeder } from "./sites/site-cache-seeder.js";
import { SiteUplinkMeter } from "./sites/uplink-meter.js";

// Validation first: a bad variable must stop us before any connection is attempted.
const env = loadGatewayEnvOrExit();
const logger = createLogger(env.LOG_LEVEL);
const metrics = createGatewayMetrics();
// Last-resort handlers, so even a crash leaves a structured line saying why.
process.on("unhandledRejection", (reason) => {
  logger.fatal({ err: reason }, "unhandled promise rejection");
  process.exit(1);
});
process.on("uncaughtException", (error) => {
  logger.fatal({ err: error }, "uncaught exception");
  process.exit(1);
});

const health = new DependencyHealth(logger.child({ component: "health" }), metrics.dependencyUp);

const natsLogger = logger.child({ component: "nats" });
const nats = new NatsHub(
  env.NATS_URL,
  natsLogger,
  {
    onDisconnect: (reason) => {
      health.markDown("nats", reason);
      natsLoop.checkNow();
    },
    onReconnect: () => natsLoop.checkNow(),
  },
  env.NATS_CREDS,
);
const db = createGatewayDatabase(env.DATABASE_URL);
// EF_UP and the artifact stores keep as many copies as the hub has JetStream servers (at most 3).
const hubReplicas = new HubReplicas(env.NATS_URL, env.NATS_SYSTEM_CREDS, natsLogger);
const streamReplicas = () => hubReplicas.get();

const probeDefaults = { health, intervalMs: env.GATEWAY_HEALTH_INTERVAL_MS };
const natsLoop = new ProbeLoop({
  ...probeDefaults,
  dependency: "nats",
  probe: nats.probe,
  logger: natsLogger,
});
const probeLoops = [
  natsLoop,
  new ProbeLoop({
    ...probeDefaults,
    dependency: "postgres",
    probe: createPostgresProbe(db),
    logger: logger.child({ component: "postgres" }),
  }),
  new ProbeLoop({
    ...probeDefaults,
    dependency: "mimir",
    probe: createMimirProbe(env.MIMIR_URL),
    logger: logger.child({ component: "mimir" }),
  }),
];

let shuttingDown = false;
const httpLogger = logger.child({ component: "http" });
const enrollmentConfig = enrollmentConfigFromEnv(env);
const enrollment = enrollmentConfig ? createEnrollment(db, enrollmentConfig, logger, metrics.registry) : null;
// Artifacts go into the organizations' object store buckets on the platform connection.
const artifacts = new ArtifactService(db, new ArtifactBuckets(() => nats.nc, streamReplicas), {
  maxBytes: env.GATEWAY_ARTIFACT_MAX_BYTES,
  allowPrivateAddresses: env.GATEWAY_ARTIFACT_IMPORT_ALLOW_PRIVATE,
});
// Alerts (src/alerts): on when the relay secret is set.
const alerting = env.GATEWAY_ALERT_RELAY_SECRET
  ? createAlerting(db, env, env.GATEWAY_ALERT_RELAY_SECRET, logger, metrics.registry)
  : null;
if (!alerting)
  logger.warn("GATEWAY_ALERT_RELAY_SECRET not set: alerting (Mimir sync, relay, delivery) is off");
// Commands to nodes: asked for over the internal API, sent on the platform connection, on each
// node's downlink (of subject layout 2, derived from the tenancy secrets).
const nodeCommands = new NodeCommandService(
  db,
  new Downlinks(enrollment?.secrets ?? null),
  metrics.registry,
  logger.child({ component: "node-commands" }),
  {
    perOrganization: env.GATEWAY_COMMANDS_PER_ORG,
    perNode: env.GATEWAY_COMMANDS_PER_NODE,
  },
  { perOrganization: env.GATEWAY_LOG_SESSIONS_PER_ORG, perNode: env.GATEWAY_LOG_SESSIONS_PER_NODE },
  { perOrganization: env.GATEWAY_PROBES_PER_ORG, perNode: 1 },
);
// Live log sessions ride the command path (docs/protocol.md, "Live logs").
const logSessions = new LogSessionService(
  nodeCommands,
  logger.child({ component: "log-sessions" }),
  env.GATEWAY_LOG_VIEWER_LEASE_MS,
);
const server = createHttpServer({
  health,
  metrics,
  logger: httpLogger,
  isShuttingDown: () => shuttingDown,
  alertRelay: alerting ? alerting.relay : null,
  internal: {
    token: env.GATEWAY_INTERNAL_TOKEN,
    hubLeafUrls: env.NATS_LEAF_URL ?? [],
    createLeafBundle: enrollment
      ? (input) =>
          createLeafBundle(db, enrollment.secrets, enrollment.accounts, input, {
            metricsIntervalS: env.GATEWAY_METRICS_INTERVAL_S,
          })
      : null,
    enrollCredentials: enrollment?.secrets.enroll.userCreds ?? null,
    artifacts,
    nodeCommands,
    logSessions,
  },
});

// HTTP comes up before the dependencies so /healthz and /readyz can report while we wait for them.
server.listen(env.GATEWAY_HTTP_PORT, env.GATEWAY_HTTP_HOST);
try {
  await once(server, "listening");
} catch (error) {
  logger.fatal({ err: error, port: env.GATEWAY_HTTP_PORT, host: env.GATEWAY_HTTP_HOST }, "cannot listen");
  process.exit(1);
}
httpLogger.info({ host: env.GATEWAY_HTTP_HOST, port: env.GATEWAY_HTTP_PORT }, "HTTP listening");
for (const loop of probeLoops) loop.start();

// Edge services run on the platform connection once NATS and Postgres answer. Each owns its
// subscriptions and is stopped before NATS drains.
interface EdgeService {
  name: string;
  start(platform: NatsConnection): Promise<void>;
  stop(): Promise<void>;
}
const edgeServices: EdgeService[] = [];
if (enrollment) {
  edgeServices.push({
    name: "enrollment",
    start: (nc) => enrollment.start(nc),
    stop: () => enrollment.stop(),
  });
} else {
  logger.warn("NATS_TENANCY_FILE / NATS_SYSTEM_CREDS not set: enrollment is disabled");
}
// Liveness, Hello, desired-state publishing, EF_UP ingest (src/edge/index.ts).
edgeServices.push(
  ...createEdgeServices(
    db,
    {
      databaseUrl: env.DATABASE_URL,
      mimirUrl: env.MIMIR_URL,
      heartbeatIntervalS: env.GATEWAY_HEARTBEAT_INTERVAL_S,
      metricsIntervalS: env.GATEWAY_METRICS_INTERVAL_S,
      livenessFlushMs: env.GATEWAY_LIVENESS_FLUSH_MS,
      disconnects: enrollment
        ? { systemConnection: enrollment.systemConnection, graceMs: env.GATEWAY_DISCONNECT_GRACE_MS }
        : undefined,
      desiredRescanMs: env.GATEWAY_DESIRED_RESCAN_MS,
      artifactCache: {
        dir: env.GATEWAY_ARTIFACT_CACHE_DIR ?? join(tmpdir(), "edgefleet-gateway-artifacts"),
        maxBytes: env.GATEWAY_ARTIFACT_CACHE_MB * 1024 * 1024,
        memoryBytes: env.GATEWAY_ARTIFACT_MEMORY_MB * 1024 * 1024,
      },
      streamReplicas,
      credentials: enrollment ? { secrets: enrollment.secrets, accounts: enrollment.accounts } : undefined,
    },
    logger,
    metrics.registry,
  ),
);
edgeServices.push(
  new ArtifactImporter(
    db,
    artifacts,
    { pollMs: env.GATEWAY_ARTIFACT_IMPORT_POLL_MS },
    logger.child({ component: "artifact-importer" }),
  ),
);
edgeServices.push(nodeCommands, logSessions);
// Rollouts: driven here, next to the desired publisher that turns their commits into deltas.
const rolloutController = new RolloutController(
  db,
  {
    databaseUrl: env.DATABASE_URL,
    tickMs: env.GATEWAY_ROLLOUT_TICK_MS,
    leaseMs: env.GATEWAY_ROLLOUT_LEASE_MS,
    mimirUrl: env.MIMIR_URL,
    ...(env.GATEWAY_REPLICA_ID ? { replicaId: env.GATEWAY_REPLICA_ID } : {}),
    // Site artifact caches need the tenancy secrets (the seeder is a user of each organization).
    ...(enrollment ? { siteCache: (onReady) => siteCachePrep(enrollment.secrets, onReady) } : {}),
  },
  logger.child({ component: "rollout-controller" }),
);
edgeServices.push(rolloutController);
// Each site's uplink under a rollout's bandwidth budget, measured on the hub for the rollout page.
if (env.NATS_MONITOR_URL) {
  edgeServices.push(
    new SiteUplinkMeter(
      db,
      {
        monitorUrl: env.NATS_MONITOR_URL,
        intervalMs: env.GATEWAY_UPLINK_METER_MS,
        replicaId: rolloutController.replicaId,
      },
      logger.child({ component: "site-uplink-meter" }),
    ),
  );
} else {
  logger.warn("NATS_MONITOR_URL not set: sites' uplinks under a rollout's budget are not measured");
}
if (alerting) {
  edgeServices.push({
    name: "alerting",
    start: async () => alerting.start(),
    stop: () => alerting.stop(),
  });
}
/** The controller's site cache seeding: reads artifacts through its own view of the gateway's disk cache. */
function siteCachePrep(secrets: TenancySecrets, onReady: (rolloutId: string) => void): RolloutSiteCachePrep {
  const artifactsOnDisk = new ArtifactCache(
    {
      // The edge services' directory: shared safely (files appear by rename), filled once.
      dir: env.GATEWAY_ARTIFACT_CACHE_DIR ?? join(tmpdir(), "edgefleet-gateway-artifacts"),
      maxBytes: env.GATEWAY_ARTIFACT_CACHE_MB * 1024 * 1024,
    },
    () => {
      if (!nats.nc) throw new Error("not connected to NATS");
      return new Objm(jetstream(nats.nc, { domain: "hub" }));
    },
  );
  return new RolloutSiteCachePrep(
    db,
    new SiteCacheSeeder(secrets, artifactsOnDisk, { natsUrl: env.NATS_URL }),
    { monitorUrls: env.NATS_MONITOR_URL ?? null },
    onReady,
    logger.child({ component: "site-cache" }),
  );
}
const startedServices: EdgeService[] = [];
const edgeServicesStarted = (async () => {
  const healthy = () => {
    const status = health.snapshot();
    return status.nats.state === "up" && status.postgres.state === "up";
  };
  for (const service of edgeServices) {
    // A service starts once NATS and Postgres answer. If NATS goes away while it starts (its
    // JetStream requests time out), it is started again once NATS is back: a blip at start-up
    // must not end the gateway (it did, as an unhandled "timeout", in the NATS-outage test).
    for (let attempt = 1; ; attempt++) {
      while (!shuttingDown && !(healthy() && nats.nc)) await delay(200);
      const platform = nats.nc;
      if (shuttingDown || !platform) return;
      try {
        await service.start(platform);
        break;
      } catch (error) {
        if (shuttingDown) return;
        logger.warn(
          { err: error, service: service.name, attempt },
          "edge service failed to start; trying again",
        );
        await delay(Math.min(5_000, 500 * attempt));
      }
    }
    startedServices.push(service);
    logger.info({ service: service.name }, "edge service started");
  }
})().catch((error: unknown) => {
  logger.fatal({ err: error }, "an edge service failed to start");
  process.exit(1);
});

installShutdown({
  logger: logger.child({ component: "shutdown" }),
  timeoutMs: env.GATEWAY_SHUTDOWN_TIMEOUT_MS,
  steps: [
    {
      name: "stop accepting HTTP",
      run: async () => {
        shuttingDown = true;
        const closed = new Promise<void>((resolve, reject) =>
          server.close((error) => (error ? reject(error) : resolve())),
        );
        // Keep-alive sockets would otherwise hold close() open until they time out.
        server.closeIdleConnections();
        await closed;
      },
    },
    { name: "stop health checks", run: () => Promise.all(probeLoops.map((loop) => loop.stop())) },
    {
      name: "stop edge services",
      run: async () => {
        await edgeServicesStarted;
        await Promise.all(startedServices.map((service) => service.stop()));
      },
    },
    { name: "drain NATS", run: () => nats.close() },
    { name: "disconnect Postgres", run: () => db.$disconnect() },
  ],
});
