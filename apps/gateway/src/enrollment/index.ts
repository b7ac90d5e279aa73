import { readFileSync } from "node:fs";
import { ACCOUNT_CHANGED_CHANNEL, type Db } from "@edgefleet/db";
import { loadTenancySecrets } from "@edgefleet/nats-tenancy";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { NotificationListener } from "../db-notifications.js";
import { CredentialIssuer } from "../edge/credentials/credential-issuer.js";
import { EnrollmentService } from "./enrollment-service.js";
import { FailureBudget } from "./failure-budget.js";
import { TenantAccounts } from "./tenant-accounts.js";

export interface EnrollmentConfig {
  databaseUrl: string;
  natsServers: string[];
  /** JSON written by the stack bootstrap (packages/nats-tenancy): operator and signing keys. */
  tenancyFile: string;
  /** System-account user: pushes account JWTs to the hub's resolver. */
  systemCredsFile: string;
  /** Failed (or in-flight) enrollment attempts admitted at once, and refilled per second. */
  failureBurst: number;
  failureRatePerSecond: number;
  /** Period of re-sending account JWTs to site leaves (a restarted leaf catches up). */
  leafAccountResendMs: number;
  leafLinkCheckMs: number;
}

/** The enrollment config from the gateway's environment; null when its NATS secrets are not set. */
export function enrollmentConfigFromEnv(env: {
  DATABASE_URL: string;
  NATS_URL: string[];
  NATS_TENANCY_FILE?: string | undefined;
  NATS_SYSTEM_CREDS?: string | undefined;
  GATEWAY_ENROLL_FAILURE_BURST: number;
  GATEWAY_ENROLL_FAILURE_RATE: number;
  GATEWAY_LEAF_ACCOUNT_RESEND_MS: number;
  GATEWAY_LEAF_LINK_CHECK_MS: number;
}): EnrollmentConfig | null {
  if (!env.NATS_TENANCY_FILE || !env.NATS_SYSTEM_CREDS) return null;
  return {
    databaseUrl: env.DATABASE_URL,
    natsServers: env.NATS_URL,
    tenancyFile: env.NATS_TENANCY_FILE,
    systemCredsFile: env.NATS_SYSTEM_CREDS,
    failureBurst: env.GATEWAY_ENROLL_FAILURE_BURST,
    failureRatePerSecond: env.GATEWAY_ENROLL_FAILURE_RATE,
    leafAccountResendMs: env.GATEWAY_LEAF_ACCOUNT_RESEND_MS,
    leafLinkCheckMs: env.GATEWAY_LEAF_LINK_CHECK_MS,
  };
}

/**
 * Enrollment and node credentials: answers `ef.enroll`, keeps each organization's NATS
 * account in step with the database (revocations), using a system-account connection of its own
 * (which the disconnect watcher shares).
 */
export function createEnrollment(db: Db, config: EnrollmentConfig, logger: Logger, registry: Registry) {
  const secrets = loadTenancySecrets(config.tenancyFile);
  let system: Promise<NatsConnection> | null = null;
  const systemConnection = () => {
    system ??= connect({
      servers: config.natsServers,
      name: "edgefleet-gateway-system",
      authenticator: credsAuthenticator(readFileSync(config.systemCredsFile)),
      maxReconnectAttempts: -1,
    }).catch((error: unknown) => {
      system = null;
      throw error;
    });
    return system;
  };
  const accounts = new TenantAccounts(db, secrets, systemConnection, logger.child({ component: "accounts" }));
  const issuer = new CredentialIssuer(db, secrets, accounts);
  const service = new EnrollmentService(
    { db, accounts, issuer },
    logger.child({ component: "enrollment" }),
    registry,
    new FailureBudget(config.failureBurst, config.failureRatePerSecond),
  );
  const listener = new NotificationListener(
    config.databaseUrl,
    ACCOUNT_CHANGED_CHANNEL,
    (organizationId) => accounts.publish(organizationId),
    logger.child({ component: "accounts" }),
  );

  const leafLogger = logger.child({ component: "accounts" });
  let resendTimer: NodeJS.Timeout | null = null;
  let linkTimer: NodeJS.Timeout | null = null;
  let checkingLinks = false;

  return {
    accounts,
    secrets,
    /** The system-account connection, shared with the disconnect watcher; closed by `stop`. */
    systemConnection,
    async start(platform: NatsConnection) {
      service.start(platform);
      await listener.start();
      resendTimer = setInterval(() => {
        accounts
          .resendToLeaves()
          .catch((error: unknown) =>
            leafLogger.warn({ err: error }, "could not re-send account JWTs to leaves"),
          );
      }, config.leafAccountResendMs);
      resendTimer.unref();
      // A leaf that (re)linked gets its organization's current account JWT within one check.
      linkTimer = setInterval(() => {
        if (checkingLinks) return;
        checkingLinks = true;
        accounts
          .pushToNewLeafLinks()
          .catch((error: unknown) => leafLogger.warn({ err: error }, "could not check the hub's leaf links"))
          .finally(() => {
            checkingLinks = false;
          });
      }, config.leafLinkCheckMs);
      linkTimer.unref();
    },
    async stop() {
      if (resendTimer) clearInterval(resendTimer);
      if (linkTimer) clearInterval(linkTimer);
      await service.stop();
      await listener.stop();
      const connection = await system?.catch(() => null);
      await connection?.drain().catch(() => undefined);
    },
  };
}
