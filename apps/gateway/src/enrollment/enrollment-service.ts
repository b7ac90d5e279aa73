import {
  decodeMessage,
  ENROLL_SUBJECT,
  encodeMessage,
  GATEWAY_QUEUE_GROUP,
  PROTOCOL_VERSION,
  sealEnrollReply,
} from "@edgefleet/agent-sdk/protocol";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { Counter, type Registry } from "prom-client";
import { runInBackground } from "../background.js";
import { type EnrollDeps, enrollNode } from "./enroll-node.js";
import { FailureBudget } from "./failure-budget.js";

/** What an agent is told while failed attempts are over budget: ask again, not "rejected". */
const THROTTLED_RETRY_SECONDS = 10;
const LOG_INTERVAL_MS = 1_000;

/**
 * Answers `ef.enroll` (platform side of the ENROLL account's import) for all gateway
 * replicas through a queue group. Every answer is sealed to the requester's one-time curve key
 * (anyone with the public enroll credentials can read the account's reply inboxes); only a
 * request too malformed to seal to gets a plain `rejected` reply saying why. An internal error
 * gets no reply, so the agent's request times out and it retries.
 */
export class EnrollmentService {
  private subscription: Subscription | null = null;
  private readonly outcomes: Counter<"outcome">;
  private readonly inFlight = new Set<Promise<void>>();
  private lastWarnAt = 0;
  private suppressedWarnings = 0;

  constructor(
    private readonly deps: EnrollDeps,
    private readonly logger: Logger,
    registry: Registry,
    private readonly failures = new FailureBudget(),
  ) {
    this.outcomes = new Counter({
      name: "edgefleet_gateway_enrollments_total",
      help: "Enrollment requests by outcome (approved, pending, rejected reasons, malformed, throttled, error)",
      labelNames: ["outcome"] as const,
      registers: [registry],
    });
  }

  start(nc: NatsConnection): void {
    this.subscription = nc.subscribe(ENROLL_SUBJECT, {
      queue: GATEWAY_QUEUE_GROUP,
      callback: (_error, msg) => {
        // Not awaited by anyone: a failure outside handle's own catch (a reply on a closing
        // connection) must be logged, not end the process.
        const handling = runInBackground(this.logger, "enrollment", () => this.handle(msg)).finally(() =>
          this.inFlight.delete(handling),
        );
        this.inFlight.add(handling);
      },
    });
  }

  async stop(): Promise<void> {
    this.subscription?.unsubscribe();
    this.subscription = null;
    await Promise.allSettled([...this.inFlight]);
  }

  private async handle(msg: Msg): Promise<void> {
    const decoded = decodeMessage("enrollRequest", msg.data);
    if (!decoded.ok) {
      this.outcomes.inc({ outcome: `malformed_${decoded.reason}` });
      this.failures.spend();
      this.warn({ reason: decoded.reason, detail: decoded.detail }, "malformed enrollment request");
      msg.respond(
        encodeMessage("enrollReply", {
          v: PROTOCOL_VERSION,
          st: "rejected",
          err: `malformed request (${decoded.reason})`.slice(0, 256),
        }),
      );
      return;
    }
    if (!this.failures.take()) {
      // Too many failed attempts lately: no lookup, and the agent asks again later.
      this.outcomes.inc({ outcome: "throttled" });
      msg.respond(
        encodeMessage(
          "enrollReply",
          sealEnrollReply(
            { v: PROTOCOL_VERSION, st: "pending", retry: THROTTLED_RETRY_SECONDS },
            decoded.msg.xk,
          ),
        ),
      );
      return;
    }
    try {
      const outcome = await enrollNode(this.deps, decoded.msg);
      const label = outcome.status === "rejected" ? `rejected_${outcome.reason}` : outcome.status;
      this.outcomes.inc({ outcome: label });
      if (outcome.status !== "rejected") this.failures.refund();
      if (outcome.status === "rejected") {
        this.warn({ reason: outcome.reason, name: decoded.msg.name }, "enrollment rejected");
      } else if (outcome.created) {
        this.logger.info({ nodeId: outcome.nodeId, status: outcome.status }, "node enrolled");
      }
      msg.respond(encodeMessage("enrollReply", sealEnrollReply(outcome.reply, decoded.msg.xk)));
    } catch (error) {
      // Our failure, not the requester's.
      this.failures.refund();
      this.outcomes.inc({ outcome: "error" });
      this.logger.error({ err: error }, "enrollment failed; the agent will retry");
    }
  }

  /** At most one warning a second, with how many were suppressed: a flood must not flood the log. */
  private warn(fields: Record<string, unknown>, message: string): void {
    const now = Date.now();
    if (now - this.lastWarnAt < LOG_INTERVAL_MS) {
      this.suppressedWarnings++;
      return;
    }
    this.logger.warn({ ...fields, suppressedSinceLastLog: this.suppressedWarnings }, message);
    this.lastWarnAt = now;
    this.suppressedWarnings = 0;
  }
}
