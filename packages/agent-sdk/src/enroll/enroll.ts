import { arch, platform } from "node:os";
import { createUser } from "@nats-io/nkeys";
import { type Authenticator, connect, type NatsConnection } from "@nats-io/transport-node";
import { type BackoffPolicy, fullJitterDelay } from "../agent/backoff.js";
import { type Logger, silentLogger } from "../logger.js";
import { nativeKeyPair } from "../nkeys/native.js";
import {
  createEnrollCurve,
  decodeMessage,
  ENROLL_SUBJECT,
  encodeMessage,
  openEnrollReply,
  PROTOCOL_VERSION,
  signEnrollProof,
} from "../protocol/index.js";
import { AGENT_VERSION } from "../version.js";
import {
  loadIdentity,
  loadPendingSeed,
  type NodeIdentity,
  saveIdentity,
  savePendingSeed,
} from "./identity.js";

export interface EnrollOptions {
  token: string;
  name: string;
  labels?: Record<string, string>;
  /** Connection to send the request on; otherwise one is made from `servers` + `authenticator`. */
  connection?: NatsConnection;
  servers?: string[];
  /** The public enrollment credentials (credsAuthenticator of the enroll creds file). */
  authenticator?: Authenticator;
  /** When set: an existing identity is reused, a pending key survives restarts, the result is stored. */
  stateDir?: string;
  /**
   * A key provisioned beforehand (nkey seed "SU…"), e.g. one whose public key the control plane
   * already has on a node row: enrollment then answers for that node instead of creating one.
   */
  seed?: string;
  /** Wait between asks while pending, and between retries when nobody answers. */
  retry?: BackoffPolicy;
  requestTimeoutMs?: number;
  signal?: AbortSignal;
  logger?: Logger;
}

export class EnrollmentRejectedError extends Error {
  override name = "EnrollmentRejectedError";
}

const DEFAULT_RETRY: BackoffPolicy = { baseMs: 2_000, maxMs: 60_000 };

/**
 * Exchanges an enrollment token for node credentials. The node's nkey pair is generated here
 * (unless `seed` gives it) and only the public key is sent. Retries while the enrollment is pending approval (or nobody
 * answers); throws EnrollmentRejectedError when rejected.
 */
export async function enroll(options: EnrollOptions): Promise<NodeIdentity> {
  const logger = options.logger ?? silentLogger;
  if (options.stateDir) {
    const existing = await loadIdentity(options.stateDir);
    if (existing) return existing;
  }
  const pendingSeed = options.stateDir ? await loadPendingSeed(options.stateDir) : null;
  // A fresh random seed is cheap; deriving its public key natively saves tweetnacl's ~5 ms.
  const keyPair = nativeKeyPair(pendingSeed ?? options.seed ?? createUser().getSeed());
  const seed = new TextDecoder().decode(keyPair.getSeed());
  if (options.stateDir && !pendingSeed) await savePendingSeed(options.stateDir, seed);

  // The reply is sealed to this one-time curve key; the signature proves we hold the node key.
  const curve = createEnrollCurve();
  const curveKey = curve.getPublicKey();
  const request = encodeMessage("enrollRequest", {
    v: PROTOCOL_VERSION,
    tok: options.token,
    key: keyPair.getPublicKey(),
    name: options.name,
    ...(options.labels && Object.keys(options.labels).length > 0 ? { lab: options.labels } : {}),
    av: AGENT_VERSION,
    os: platform(),
    arch: arch(),
    xk: curveKey,
    sig: signEnrollProof(keyPair, options.token, curveKey),
  });

  const ownConnection = options.connection
    ? undefined
    : await connect({
        servers: options.servers ?? [],
        ...(options.authenticator ? { authenticator: options.authenticator } : {}),
        name: `edgefleet-agent enroll ${options.name}`,
        maxReconnectAttempts: -1,
        waitOnFirstConnect: true,
      });
  const nc = (options.connection ?? ownConnection) as NatsConnection;
  try {
    for (let attempt = 0; ; attempt++) {
      if (options.signal?.aborted) throw new Error("enrollment aborted");
      let waitSeconds: number | undefined;
      try {
        const reply = await nc.request(ENROLL_SUBJECT, request, {
          timeout: options.requestTimeoutMs ?? 10_000,
        });
        const wire = decodeMessage("enrollReply", reply.data);
        const decoded = wire.ok ? openEnrollReply(wire.msg, curve) : wire;
        if (!decoded.ok) {
          logger.warn("invalid enrollment reply", { reason: decoded.reason, detail: decoded.detail });
        } else if (decoded.msg.st === "rejected") {
          throw new EnrollmentRejectedError(`enrollment rejected: ${decoded.msg.err ?? "no reason given"}`);
        } else if (decoded.msg.st === "approved") {
          const { nid, wid, org, jwt } = decoded.msg as Required<typeof decoded.msg>;
          const identity: NodeIdentity = { nid, wid, org, jwt, seed };
          if (options.stateDir) await saveIdentity(options.stateDir, identity);
          logger.info("enrolled", { nid, wid, org });
          return identity;
        } else {
          waitSeconds = decoded.msg.retry;
          logger.info("enrollment pending approval", { retryInSeconds: waitSeconds });
        }
      } catch (error) {
        if (error instanceof EnrollmentRejectedError) throw error;
        logger.warn("enrollment request not answered", {
          error: error instanceof Error ? error.message : String(error),
        });
      }
      const retry = options.retry ?? DEFAULT_RETRY;
      const delay =
        waitSeconds !== undefined
          ? Math.min(waitSeconds * 1000, retry.maxMs)
          : fullJitterDelay(attempt, retry);
      await new Promise((resolve) => setTimeout(resolve, Math.max(delay, retry.baseMs / 4)));
    }
  } finally {
    await ownConnection?.close();
  }
}
