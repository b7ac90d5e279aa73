import { createEnv } from "@t3-oss/env-core";
import { z } from "zod";

// The only module that reads process.env: everything else receives a validated GatewayEnv, so a typo
// or a missing variable stops the process here, before any connection is attempted.

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

function urlWithProtocols(name: string, protocols: readonly string[]) {
  return z.string({ error: `${name} is required` }).refine(
    (value) => URL.canParse(value) && protocols.includes(new URL(value).protocol),
    // The value is not echoed: DATABASE_URL may carry a password.
    { error: `${name} must be a URL starting with ${protocols.map((p) => `${p}//`).join(" or ")}` },
  );
}

/** "a, b,,c" → ["a", "b", "c"]: a setting that names several members of a cluster. */
function commaSeparated(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

const natsServerList = z
  .string({ error: "NATS_URL is required" })
  // A comma-separated list lets production point at several members of the hub cluster.
  .transform(commaSeparated)
  .refine((servers) => servers.length > 0, { error: "NATS_URL must name at least one server" })
  .refine(
    (servers) =>
      servers.every((server) => URL.canParse(server) && ["nats:", "tls:"].includes(new URL(server).protocol)),
    { error: "NATS_URL must be nats://host:port or tls://host:port (comma-separated for several servers)" },
  );

function integerInRange(name: string, min: number, max: number, defaultValue: number) {
  return optionalIntegerInRange(name, min, max).default(defaultValue);
}

/**
 * An integer setting with no default: unset means "not overridden". (A `.default()` inside
 * `.optional()` is still filled in by zod 4, which once made every install override the
 * per-severity alert timings.)
 */
function optionalIntegerInRange(name: string, min: number, max: number) {
  return z.coerce
    .number({ error: `${name} must be an integer` })
    .int({ error: `${name} must be an integer` })
    .min(min, { error: `${name} must be between ${min} and ${max}` })
    .max(max, { error: `${name} must be between ${min} and ${max}` });
}

const gatewayEnvSchema = {
  DATABASE_URL: urlWithProtocols("DATABASE_URL", ["postgresql:", "postgres:"]),
  NATS_URL: natsServerList,
  MIMIR_URL: urlWithProtocols("MIMIR_URL", ["http:", "https:"]),
  // The hub's monitoring endpoint (comma-separated: every node of a cluster): site uplink use is
  // measured on their /leafz byte counters.
  NATS_MONITOR_URL: z
    .string()
    .transform(commaSeparated)
    .refine(
      (urls) =>
        urls.length > 0 &&
        urls.every((url) => URL.canParse(url) && ["http:", "https:"].includes(new URL(url).protocol)),
      { error: "NATS_MONITOR_URL must be http://host:port (comma-separated for several nodes)" },
    )
    .optional(),
  // Operator-mode hub (docs/protocol.md): the platform user, the system user (pushes account
  // JWTs) and the tenancy secrets (signing keys). Without the last two, enrollment is off.
  NATS_CREDS: z.string().min(1).optional(),
  NATS_SYSTEM_CREDS: z.string().min(1).optional(),
  NATS_TENANCY_FILE: z.string().min(1).optional(),
  // Where sites' leaf nodes reach the hub (comma-separated), written into generated leaf configs.
  NATS_LEAF_URL: z
    .string()
    .transform(commaSeparated)
    .refine(
      (urls) =>
        urls.every(
          (url) =>
            URL.canParse(url) &&
            ["nats-leaf:", "nats:", "tls:", "ws:", "wss:"].includes(new URL(url).protocol),
        ),
      {
        error: "NATS_LEAF_URL must be nats-leaf://host:port (or tls://, ws://; comma-separated for several)",
      },
    )
    .optional(),
  // Shared secret of the internal API (/internal/…, used by the console's API); unset: that API is off.
  GATEWAY_INTERNAL_TOKEN: z
    .string()
    .min(32, { error: "GATEWAY_INTERNAL_TOKEN must be at least 32 characters" })
    .optional(),
  GATEWAY_HTTP_PORT: integerInRange("GATEWAY_HTTP_PORT", 1, 65535, 8090),
  // Loopback by default: exposing the probes and metrics beyond the host is a deployment decision.
  GATEWAY_HTTP_HOST: z.string().min(1).default("127.0.0.1"),
  LOG_LEVEL: z
    .enum(LOG_LEVELS, { error: `LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}` })
    .default("info"),
  // Below the usual 30 s SIGKILL grace of process supervisors, so our own forced exit logs why.
  GATEWAY_SHUTDOWN_TIMEOUT_MS: integerInRange("GATEWAY_SHUTDOWN_TIMEOUT_MS", 100, 600_000, 10_000),
  // How often a healthy dependency is re-probed; an unhealthy one is retried sooner, with backoff.
  GATEWAY_HEALTH_INTERVAL_MS: integerInRange("GATEWAY_HEALTH_INTERVAL_MS", 100, 600_000, 5_000),
  // Told to agents in HelloReply; liveness timing (offline after 3 intervals + slack) derives from it.
  // A backstop: a closed or pinged-out connection is reported by the servers' DISCONNECT events
  // within seconds (GATEWAY_DISCONNECT_GRACE_MS), so heartbeats only bound what no server reports.
  GATEWAY_HEARTBEAT_INTERVAL_S: integerInRange("GATEWAY_HEARTBEAT_INTERVAL_S", 1, 3600, 60),
  GATEWAY_METRICS_INTERVAL_S: integerInRange("GATEWAY_METRICS_INTERVAL_S", 1, 86_400, 60),
  // Heartbeats are collected in memory and written to Postgres in one UPDATE this often.
  GATEWAY_LIVENESS_FLUSH_MS: integerInRange("GATEWAY_LIVENESS_FLUSH_MS", 50, 60_000, 2_000),
  // A node whose connection closed is marked offline after this, unless it said Hello again
  // meanwhile (a leaf restart, a blip). Needs NATS_SYSTEM_CREDS: the servers' DISCONNECT events.
  GATEWAY_DISCONNECT_GRACE_MS: integerInRange("GATEWAY_DISCONNECT_GRACE_MS", 100, 600_000, 5_000),
  // Largest app artifact accepted by upload or URL import (bytes; default 512 MiB). Nodes download
  // it over NATS, so this also bounds what one version costs every node's disk and link.
  GATEWAY_ARTIFACT_MAX_BYTES: integerInRange("GATEWAY_ARTIFACT_MAX_BYTES", 1, 8 * 1024 ** 3, 512 * 1024 ** 2),
  // URL imports may reach loopback/private addresses (tests, an internal mirror). Off by default:
  // a tenant-named URL must not reach the control plane's own network.
  GATEWAY_ARTIFACT_IMPORT_ALLOW_PRIVATE: z
    .enum(["true", "false", "1", "0"], {
      error: "GATEWAY_ARTIFACT_IMPORT_ALLOW_PRIVATE must be true or false",
    })
    .default("false")
    .transform((value) => value === "true" || value === "1"),
  // How often the importer looks for URL versions waiting for their artifact.
  GATEWAY_ARTIFACT_IMPORT_POLL_MS: integerInRange("GATEWAY_ARTIFACT_IMPORT_POLL_MS", 100, 600_000, 1_000),
  // Rollout controller: how often it renews its leases and steps due rollouts, and how long a
  // lease holds (the handover time when a replica dies).
  GATEWAY_ROLLOUT_TICK_MS: integerInRange("GATEWAY_ROLLOUT_TICK_MS", 50, 60_000, 1_000),
  GATEWAY_ROLLOUT_LEASE_MS: integerInRange("GATEWAY_ROLLOUT_LEASE_MS", 500, 600_000, 5_000),
  // Sites' uplinks under a rollout's bandwidth budget: how often the hub's /leafz is read and each
  // site's use written for the rollout page (needs NATS_MONITOR_URL).
  GATEWAY_UPLINK_METER_MS: integerInRange("GATEWAY_UPLINK_METER_MS", 500, 60_000, 2_000),
  // This replica's name in rollout leases (default: host, pid and a random suffix).
  GATEWAY_REPLICA_ID: z.string().min(1).max(200).optional(),
  // Safety net behind LISTEN/NOTIFY: re-publish deltas online nodes have not acknowledged.
  GATEWAY_DESIRED_RESCAN_MS: integerInRange("GATEWAY_DESIRED_RESCAN_MS", 100, 3_600_000, 30_000),
  // Artifacts served to nodes are copied from the object store to this disk cache (default: the
  // system temp dir), least recently used evicted past the size.
  GATEWAY_ARTIFACT_CACHE_DIR: z.string().min(1).optional(),
  GATEWAY_ARTIFACT_CACHE_MB: integerInRange("GATEWAY_ARTIFACT_CACHE_MB", 16, 1_048_576, 2048),
  // Encoded chunk replies kept in memory (0: none), least recently used evicted past the size.
  GATEWAY_ARTIFACT_MEMORY_MB: integerInRange("GATEWAY_ARTIFACT_MEMORY_MB", 0, 65_536, 64),
  // Node commands in flight (per replica): per organization, and per node (docs/protocol.md, "Commands").
  GATEWAY_COMMANDS_PER_ORG: integerInRange("GATEWAY_COMMANDS_PER_ORG", 1, 10_000, 32),
  GATEWAY_COMMANDS_PER_NODE: integerInRange("GATEWAY_COMMANDS_PER_NODE", 1, 16, 1),
  // Live log sessions (per replica) and throughput probes (per replica; one per node at a time).
  GATEWAY_LOG_SESSIONS_PER_ORG: integerInRange("GATEWAY_LOG_SESSIONS_PER_ORG", 1, 10_000, 16),
  GATEWAY_LOG_SESSIONS_PER_NODE: integerInRange("GATEWAY_LOG_SESSIONS_PER_NODE", 1, 4, 2),
  // A log viewer that has not polled for this long left: its session is cancelled on the node.
  GATEWAY_LOG_VIEWER_LEASE_MS: integerInRange("GATEWAY_LOG_VIEWER_LEASE_MS", 1_000, 600_000, 15_000),
  GATEWAY_PROBES_PER_ORG: integerInRange("GATEWAY_PROBES_PER_ORG", 1, 1_000, 4),
  // Enrollment attempts that fail (bad token, bad proof, malformed) are budgeted: this many at
  // once, refilled this many a second; past it agents are told to ask again later.
  GATEWAY_ENROLL_FAILURE_BURST: integerInRange("GATEWAY_ENROLL_FAILURE_BURST", 1, 1_000_000, 200),
  GATEWAY_ENROLL_FAILURE_RATE: integerInRange("GATEWAY_ENROLL_FAILURE_RATE", 1, 1_000_000, 20),
  /**
   * How often the hub's leaf connections are checked: an organization with a leaf that (re)linked
   * since gets its current account JWT pushed (a restarted leaf starts from its bundle's copy and
   * has missed later revocations until then).
   */
  GATEWAY_LEAF_LINK_CHECK_MS: integerInRange("GATEWAY_LEAF_LINK_CHECK_MS", 100, 600_000, 5_000),
  /**
   * How often each organization's account JWT is re-sent to its site leaves anyway (issue 8 #13):
   * the safety net under the link check. Each re-send costs every leaf a verification of each
   * connected node's credentials, so it is rare.
   */
  GATEWAY_LEAF_ACCOUNT_RESEND_MS: integerInRange("GATEWAY_LEAF_ACCOUNT_RESEND_MS", 100, 3_600_000, 600_000),
  // Alerts (src/alerts, docs/alerts.md). The relay secret derives each organization's bearer token
  // for its Alertmanager's webhook; unset: alerting (Mimir sync, relay, delivery) is off.
  GATEWAY_ALERT_RELAY_SECRET: z
    .string()
    .min(32, { error: "GATEWAY_ALERT_RELAY_SECRET must be at least 32 characters" })
    .optional(),
  // Where Mimir's Alertmanager reaches this gateway's relay (default: this process on loopback).
  GATEWAY_ALERT_RELAY_URL: urlWithProtocols("GATEWAY_ALERT_RELAY_URL", ["http:", "https:"]).optional(),
  // The console's base URL, for the links in alerts.
  GATEWAY_CONSOLE_URL: urlWithProtocols("GATEWAY_CONSOLE_URL", ["http:", "https:"]).default(
    "http://127.0.0.1:3000",
  ),
  // How often changed organizations are applied to Mimir, and how often all are checked for drift.
  GATEWAY_ALERT_SYNC_MS: integerInRange("GATEWAY_ALERT_SYNC_MS", 100, 3_600_000, 5_000),
  GATEWAY_ALERT_DRIFT_CHECK_MS: integerInRange("GATEWAY_ALERT_DRIFT_CHECK_MS", 1_000, 86_400_000, 300_000),
  // How often node info/liveness series are written for alert rules (well inside Mimir's 5 min lookback).
  GATEWAY_ALERT_SERIES_INTERVAL_MS: integerInRange("GATEWAY_ALERT_SERIES_INTERVAL_MS", 500, 240_000, 30_000),
  // How often rollout status events are looked for and posted to Alertmanager as event alerts.
  GATEWAY_ALERT_EVENT_POLL_MS: integerInRange("GATEWAY_ALERT_EVENT_POLL_MS", 100, 600_000, 2_000),
  // Rule evaluation interval of the generated groups.
  GATEWAY_ALERT_EVALUATION_INTERVAL_S: integerInRange("GATEWAY_ALERT_EVALUATION_INTERVAL_S", 1, 3600, 30),
  // Override Alertmanager's group_wait / group_interval for every severity (test stacks: seconds).
  GATEWAY_ALERT_GROUP_WAIT_S: optionalIntegerInRange("GATEWAY_ALERT_GROUP_WAIT_S", 0, 86_400).optional(),
  GATEWAY_ALERT_GROUP_INTERVAL_S: optionalIntegerInRange(
    "GATEWAY_ALERT_GROUP_INTERVAL_S",
    1,
    86_400,
  ).optional(),
  // Delivery from the outbox: poll, retries with backoff, when a failing channel is switched off.
  GATEWAY_ALERT_DELIVERY_POLL_MS: integerInRange("GATEWAY_ALERT_DELIVERY_POLL_MS", 50, 60_000, 1_000),
  GATEWAY_ALERT_MAX_ATTEMPTS: integerInRange("GATEWAY_ALERT_MAX_ATTEMPTS", 1, 100, 8),
  GATEWAY_ALERT_BACKOFF_BASE_MS: integerInRange("GATEWAY_ALERT_BACKOFF_BASE_MS", 10, 3_600_000, 5_000),
  GATEWAY_ALERT_BACKOFF_MAX_MS: integerInRange("GATEWAY_ALERT_BACKOFF_MAX_MS", 10, 86_400_000, 900_000),
  GATEWAY_ALERT_DISABLE_AFTER_FAILURES: integerInRange("GATEWAY_ALERT_DISABLE_AFTER_FAILURES", 1, 10_000, 20),
  // Finished notifications (and their delivery log) are deleted after this many hours (default 30 days), checked hourly.
  GATEWAY_ALERT_RETENTION_HOURS: integerInRange("GATEWAY_ALERT_RETENTION_HOURS", 1, 87_600, 720),
  GATEWAY_ALERT_CLEANUP_INTERVAL_MS: integerInRange(
    "GATEWAY_ALERT_CLEANUP_INTERVAL_MS",
    1_000,
    86_400_000,
    3_600_000,
  ),
  // Webhooks may reach loopback/private addresses (tests). Off by default, as for URL imports.
  GATEWAY_ALERT_WEBHOOK_ALLOW_PRIVATE: z
    .enum(["true", "false", "1", "0"], { error: "GATEWAY_ALERT_WEBHOOK_ALLOW_PRIVATE must be true or false" })
    .default("false")
    .transform((value) => value === "true" || value === "1"),
  // E-mail channels: smtp://host:port (or smtps://, user:password@ in the URL); unset: e-mail is not sent.
  GATEWAY_SMTP_URL: urlWithProtocols("GATEWAY_SMTP_URL", ["smtp:", "smtps:"]).optional(),
  GATEWAY_ALERT_MAIL_FROM: z.string().min(3).default("Edgefleet alerts <alerts@edgefleet.invalid>"),
  // Web Push (docs/alerts.md): the VAPID key pair (base64url, as web-push generates it), generated
  // per install into var/<profile>; the console has the same public key. The action secret signs
  // the notifications' action tokens (the console verifies them). Unset: Web Push is off.
  EDGEFLEET_VAPID_PUBLIC_KEY: z
    .string()
    .regex(/^[A-Za-z0-9_-]{80,90}$/, {
      error: "EDGEFLEET_VAPID_PUBLIC_KEY must be a base64url P-256 public key",
    })
    .optional(),
  EDGEFLEET_VAPID_PRIVATE_KEY: z
    .string()
    .regex(/^[A-Za-z0-9_-]{40,45}$/, {
      error: "EDGEFLEET_VAPID_PRIVATE_KEY must be a base64url P-256 private key",
    })
    .optional(),
  EDGEFLEET_VAPID_SUBJECT: z
    .string()
    .refine((value) => /^(mailto:|https:\/\/)/.test(value), {
      error: "EDGEFLEET_VAPID_SUBJECT must be a mailto: or https:// contact",
    })
    .default("mailto:alerts@edgefleet.invalid"),
  EDGEFLEET_PUSH_ACTION_SECRET: z
    .string()
    .min(32, { error: "EDGEFLEET_PUSH_ACTION_SECRET must be at least 32 characters" })
    .optional(),
};

export class GatewayEnvError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid gateway environment:\n${problems.map((problem) => `  - ${problem}`).join("\n")}`);
    this.name = "GatewayEnvError";
  }
}

/** Validates the given variables; throws GatewayEnvError naming every bad variable. */
export function parseGatewayEnv(runtimeEnv: Record<string, string | undefined>) {
  return createEnv({
    server: gatewayEnvSchema,
    runtimeEnv,
    // `GATEWAY_HTTP_PORT=` in an env file means "use the default", not "invalid number".
    emptyStringAsUndefined: true,
    // t3-env must treat this as server code even if a test environment defines `window`.
    isServer: true,
    onValidationError: (issues) => {
      throw new GatewayEnvError(
        issues.map((issue) => {
          const variable = issue.path?.[0];
          const name = typeof variable === "object" ? String(variable.key) : String(variable ?? "?");
          // Our messages already start with the variable name; zod's built-in ones do not.
          return issue.message.startsWith(name) ? issue.message : `${name}: ${issue.message}`;
        }),
      );
    },
  });
}

export type GatewayEnv = ReturnType<typeof parseGatewayEnv>;

/** Reads process.env; on bad input prints the problems to stderr and exits 1. */
export function loadGatewayEnvOrExit(): GatewayEnv {
  try {
    return parseGatewayEnv(process.env);
  } catch (error) {
    if (error instanceof GatewayEnvError) {
      // Plain stderr, not the JSON logger: the log level itself may be what is invalid.
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
