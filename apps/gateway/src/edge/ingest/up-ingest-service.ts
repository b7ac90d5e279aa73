import { EF_UP_STREAM, parsePlatformUpSubject } from "@edgefleet/agent-sdk/protocol";
import { type Db, isDataException } from "@edgefleet/db";
import {
  type Consumer,
  type ConsumerMessages,
  type JetStreamManager,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import { type IntakeDeps, intakeUpMessage } from "../intake.js";
import type { EdgeService } from "../service.js";
import { BatchWriter } from "./batch-writer.js";
import { ensureEfUpStream, ensureGatewayConsumer, GATEWAY_CONSUMER } from "./ef-up-stream.js";
import { INGEST_STALL_MS, judgeIngestProgress } from "./ingest-progress.js";
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
 * Up messages handled at once (different nodes). Status reports and acks are written in batches
 * (BatchWriter: a few statements in flight, each for many nodes) and metrics too (MetricsBatcher,
 * which holds back once a few batches wait for Mimir), so this bounds what waits in memory, not
 * the database connections taken.
 */
const INGEST_CONCURRENCY = 256;
/** Reports per statement at most, and statements in flight per kind. */
const WRITE_BATCH = 250;
const WRITES_IN_FLIGHT = 2;
/** How often a quiet consume is checked against the consumer's state (judgeIngestProgress). */
const PROGRESS_CHECK_MS = INGEST_STALL_MS / 2;
/** Messages a consume holds from the hub at most (pulled ahead of the handlers). */
const CONSUME_MAX_MESSAGES = 512;

/**
 * Consumes EF_UP through the shared durable pull consumer and dispatches by subject type:
 * StatusReport and DesiredAck to Postgres (idempotent, sequence/revision guarded), MetricsReport
 * to the metrics batcher (Mimir). Bad or stale messages are terminated (never redelivered) and
 * counted; a failing dependency naks the message for a later retry.
 */
export class UpIngestService implements EdgeService {
  readonly name = "up-ingest";
  private messages: ConsumerMessages | null = null;
  private jsm: JetStreamManager | null = null;
  private consumer: Consumer | null = null;
  private loop: Promise<void> = Promise.resolve();
  private lastReceivedAt = Date.now();
  private progressTimer: NodeJS.Timeout | null = null;
  // One message at a time held 10,000 nodes' status reports and metrics to ~150 a second (each
  // a Postgres transaction), until JetStream redelivered what waited past ack_wait. Per node the
  // order stays as it arrived.
  private readonly concurrency = new KeyedConcurrency(INGEST_CONCURRENCY);
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
    this.jsm = jsm;
    await ensureEfUpStream(jsm, await this.streamReplicas(), this.logger);
    // One consumer for every type: a second, filtered to metrics, stalled the first in a
    // 20,000-node run (the server's filtered delivery over a deep work queue).
    await ensureGatewayConsumer(jsm);
    this.consumer = await jetstream(platform, { domain: "hub" }).consumers.get(
      EF_UP_STREAM,
      GATEWAY_CONSUMER,
    );
    await this.consume();
    this.progressTimer = setInterval(() => {
      // A hub that cannot start a new consume now is tried again at the next check.
      this.checkProgress().catch((error: unknown) =>
        this.logger.error({ err: error }, "EF_UP progress check failed; checking again later"),
      );
    }, PROGRESS_CHECK_MS);
    this.progressTimer.unref();
  }

  private async consume(): Promise<void> {
    if (!this.consumer) return;
    const messages = await this.consumer.consume({ max_messages: CONSUME_MAX_MESSAGES });
    this.messages = messages;
    this.lastReceivedAt = Date.now();
    this.loop = (async () => {
      for await (const msg of messages) {
        this.lastReceivedAt = Date.now();
        const parsed = parsePlatformUpSubject(msg.subject);
        await this.concurrency.submit(parsed ? `${parsed.org}.${parsed.wid}` : msg.subject, () =>
          this.handle(msg, parsed?.type),
        );
      }
    })();
  }

  /**
   * A consume that stopped asking for messages while work waits is replaced; one held back by
   * its own handlers is only reported (judgeIngestProgress). Checked only once the loop has been
   * quiet for a while, so an ingesting gateway asks the hub nothing.
   */
  private async checkProgress(): Promise<void> {
    const messages = this.messages;
    if (!messages || !this.consumer || Date.now() - this.lastReceivedAt < INGEST_STALL_MS) return;
    let info: Awaited<ReturnType<Consumer["info"]>>;
    try {
      info = await this.consumer.info();
    } catch (error) {
      this.logger.warn({ err: error }, "EF_UP consumer state unavailable; checking again later");
      return;
    }
    const progress = judgeIngestProgress({
      idleMs: Date.now() - this.lastReceivedAt,
      handlersBusy: this.concurrency.size,
      handlerLimit: INGEST_CONCURRENCY,
      consumer: {
        numPending: info.num_pending,
        numWaiting: info.num_waiting,
        numAckPending: info.num_ack_pending,
      },
    });
    if (progress.verdict === "moving") return;
    if (progress.verdict === "held_back") {
      this.logger.warn({ why: progress.why }, "EF_UP ingest held back");
      return;
    }
    if (messages !== this.messages) return; // stopped or replaced meanwhile
    this.logger.warn({ why: progress.why }, "EF_UP consume stalled; starting a new one");
    this.metrics.consumeRestarts.inc();
    // The old loop's handlers finish and ack as usual: acks go by reply subject, not by consume.
    messages.stop();
    await this.consume();
  }

  /**
   * How far ingest got, as the hub's time: when EF_UP holds messages, the store time of the
   * oldest (a work queue keeps only what no replica has acknowledged yet); null when it is empty.
   * The offline sweeper judges liveness as of this time, since a node's reports are its sign of
   * life and the ones waiting here have not been counted yet.
   */
  async ingestedUpTo(): Promise<Date | null> {
    if (!this.jsm) return null;
    const { state } = await this.jsm.streams.info(EF_UP_STREAM);
    return state.messages > 0 ? new Date(state.first_ts) : null;
  }

  async stop(): Promise<void> {
    if (this.progressTimer) clearInterval(this.progressTimer);
    this.progressTimer = null;
    await this.messages?.close();
    this.messages = null;
    await this.loop;
    await this.concurrency.idle();
    await Promise.all([this.statuses.drained(), this.acks.drained()]);
    await this.metricsBatcher.flush();
  }

  /** `type` is the subject's, parsed once by the consume loop. */
  private async handle(msg: JsMsg, type: string | undefined): Promise<void> {
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
