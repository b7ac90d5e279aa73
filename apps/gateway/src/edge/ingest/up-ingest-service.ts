import { EF_UP_STREAM, parsePlatformUpSubject } from "@edgefleet/agent-sdk/protocol";
import { type Db, isDataException } from "@edgefleet/db";
import { type ConsumerMessages, type JsMsg, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import { type IntakeDeps, intakeUpMessage } from "../intake.js";
import type { EdgeService } from "../service.js";
import { BatchWriter } from "./batch-writer.js";
import {
  ensureEfUpStream,
  ensureGatewayConsumers,
  GATEWAY_CONSUMER,
  GATEWAY_METRICS_CONSUMER,
} from "./ef-up-stream.js";
import { KeyedConcurrency } from "./keyed-concurrency.js";
import type { MetricsBatcher } from "./metrics-batcher.js";
import {
  type NodeAck,
  type NodeStatus,
  type WriteOutcome,
  writeDesiredAcks,
  writeStatusReports,
} from "./status-writer.js";

const RETRY_DELAY_MS = 5_000;
/**
 * Status reports and acks handled at once (different nodes). They are written in batches
 * (BatchWriter: a few statements in flight, each for many nodes), so this bounds what waits in
 * memory, not the database connections taken.
 */
const STATUS_CONCURRENCY = 256;
/**
 * Metrics reports handled at once. Each waits, unacknowledged, for its batch's Mimir write
 * (MetricsBatcher), so this bounds the reports in flight to a few batches: more only queue
 * behind Mimir until JetStream's ack wait runs out and redelivers them.
 */
const METRICS_CONCURRENCY = 4;
/** Reports per statement at most, and statements in flight per kind. */
const WRITE_BATCH = 250;
const WRITES_IN_FLIGHT = 2;

/**
 * Consumes EF_UP through the shared durable pull consumers (statuses and acks on one, metrics on
 * the other: GATEWAY_CONSUMERS) and dispatches by subject type:
 * StatusReport and DesiredAck to Postgres (idempotent, sequence/revision guarded), MetricsReport
 * to the metrics batcher (Mimir). Bad or stale messages are terminated (never redelivered) and
 * counted; a failing dependency naks the message for a later retry.
 */
export class UpIngestService implements EdgeService {
  readonly name = "up-ingest";
  private readonly consumers: Array<{ messages: ConsumerMessages; loop: Promise<void> }> = [];
  // One message at a time held 10,000 nodes' status reports and metrics to ~150 a second (each
  // a Postgres transaction), until JetStream redelivered what waited past ack_wait. Per node the
  // order stays as it arrived.
  private readonly statusConcurrency = new KeyedConcurrency(STATUS_CONCURRENCY);
  private readonly metricsConcurrency = new KeyedConcurrency(METRICS_CONCURRENCY);
  private readonly statuses: BatchWriter<NodeStatus, WriteOutcome>;
  private readonly acks: BatchWriter<NodeAck, "stored" | "revision_ahead">;

  constructor(
    db: Db,
    private readonly intake: IntakeDeps,
    private readonly metricsBatcher: MetricsBatcher,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
    /** EF_UP's replica count (HubReplicas: it follows the hub's JetStream cluster). */
    private readonly streamReplicas: () => Promise<number>,
  ) {
    const batches = { batchSize: WRITE_BATCH, concurrency: WRITES_IN_FLIGHT, logger };
    this.statuses = new BatchWriter({
      ...batches,
      task: "status-writes",
      key: (status) => status.node.id,
      writeMany: (statuses) => writeStatusReports(db, statuses),
    });
    this.acks = new BatchWriter({
      ...batches,
      task: "ack-writes",
      key: (ack) => ack.node.id,
      writeMany: (acks) => writeDesiredAcks(db, acks),
    });
  }

  async start(platform: NatsConnection): Promise<void> {
    const jsm = await jetstreamManager(platform, { domain: "hub" });
    await ensureEfUpStream(jsm, await this.streamReplicas(), this.logger);
    await ensureGatewayConsumers(jsm);
    const js = jetstream(platform, { domain: "hub" });
    for (const [name, concurrency] of [
      [GATEWAY_CONSUMER, this.statusConcurrency],
      [GATEWAY_METRICS_CONSUMER, this.metricsConcurrency],
    ] as const) {
      const messages = await (await js.consumers.get(EF_UP_STREAM, name)).consume({ max_messages: 512 });
      const loop = (async () => {
        for await (const msg of messages) {
          const parsed = parsePlatformUpSubject(msg.subject);
          await concurrency.submit(parsed ? `${parsed.org}.${parsed.wid}` : msg.subject, () =>
            this.handle(msg),
          );
        }
      })();
      this.consumers.push({ messages, loop });
    }
  }

  async stop(): Promise<void> {
    const consumers = this.consumers.splice(0);
    await Promise.all(consumers.map((consumer) => consumer.messages.close()));
    await Promise.all(consumers.map((consumer) => consumer.loop));
    await Promise.all([this.statusConcurrency.idle(), this.metricsConcurrency.idle()]);
    await Promise.all([this.statuses.drained(), this.acks.drained()]);
    await this.metricsBatcher.flush();
  }

  private async handle(msg: JsMsg): Promise<void> {
    const type = parsePlatformUpSubject(msg.subject)?.type;
    // A report stored before its node moved to another site, on the old one, is its own.
    const options = { storedAt: msg.info.timestampNanos / 1e6 };
    try {
      if (type === "st") {
        const taken = await intakeUpMessage(
          this.intake,
          msg.subject,
          msg.data,
          "st",
          "statusReport",
          options,
        );
        if (!taken) return msg.term("rejected");
        const outcome = await this.statuses.write({ node: taken.node, report: taken.msg });
        if (outcome !== "stored") {
          this.intake.rejections.reject(
            "st",
            outcome,
            `seq ${taken.msg.seq} is not newer than the stored one`,
            msg.subject,
          );
          return msg.term(outcome);
        }
        this.metrics.accepted.inc({ type: "st" });
        return msg.ack();
      }
      if (type === "ack") {
        const taken = await intakeUpMessage(this.intake, msg.subject, msg.data, "ack", "desiredAck", options);
        if (!taken) return msg.term("rejected");
        const outcome = await this.acks.write({ node: taken.node, revision: taken.msg.rev });
        if (outcome !== "stored") {
          this.intake.rejections.reject(
            "ack",
            outcome,
            `revision ${taken.msg.rev} was never desired`,
            msg.subject,
          );
          return msg.term(outcome);
        }
        this.metrics.accepted.inc({ type: "ack" });
        return msg.ack();
      }
      if (type === "mx") {
        const taken = await intakeUpMessage(
          this.intake,
          msg.subject,
          msg.data,
          "mx",
          "metricsReport",
          options,
        );
        if (!taken) return msg.term("rejected");
        return await this.metricsBatcher.add(taken.node, taken.msg, msg);
      }
      this.intake.rejections.reject(
        type ?? "unknown",
        "bad_subject",
        "not a durable up subject",
        msg.subject,
      );
      msg.term("bad_subject");
    } catch (error) {
      if (isDataException(error)) {
        // Schema-valid yet unstorable (the schema should have caught it): the same bytes fail
        // at every delivery, so it is terminated and counted, never redelivered.
        this.intake.rejections.reject(type ?? "unknown", "unstorable", String(error), msg.subject);
        return msg.term("unstorable");
      }
      // Postgres or the lookup failed: not the message's fault, so it comes back later.
      this.logger.error({ err: error, subject: msg.subject }, "EF_UP message handling failed; redelivering");
      msg.nak(RETRY_DELAY_MS);
    }
  }
}
