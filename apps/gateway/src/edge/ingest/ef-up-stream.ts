import { DURABLE_UP_TYPES, EF_UP_STREAM, platformUpWildcards } from "@edgefleet/agent-sdk/protocol";
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from "@nats-io/jetstream";
import { untilStreamLeads } from "../../hub-replicas.js";
import type { Logger } from "../../logger.js";

/** Durable pull consumer shared by every gateway replica (each message goes to one of them). */
export const GATEWAY_CONSUMER = "gateway";

const NANOS_PER_MS = 1_000_000;

/**
 * `EF_UP`: status reports, metrics and desired acks from every node, file-backed.
 * Work-queue retention: a message is deleted once the gateway acked it, so the stream holds only
 * the backlog (bounded by max_bytes / max_age; when full the oldest backlog goes first).
 * No deduplication by Nats-Msg-Id: this one stream holds every tenant's reports, so an id that a
 * node chooses would let it make another node's report a "duplicate", dropped by the stream yet
 * acknowledged to its sender (issue 8, finding 1). Agents send no id, and the window is the
 * server's minimum so that a hostile node's ids outlive nothing. A report re-published after a
 * lost PubAck is stored twice and the ingest drops the second by its sequence, per node.
 * `num_replicas` follows the hub (HubReplicas): R3 on a cluster, so a PubAck means a quorum holds it.
 */
export const EF_UP_STREAM_CONFIG = {
  name: EF_UP_STREAM,
  // Both subject layouts: nodes enrolled before site scoping publish layout 1 until they migrate.
  subjects: DURABLE_UP_TYPES.flatMap((type) => platformUpWildcards(type)),
  storage: StorageType.File,
  retention: RetentionPolicy.Workqueue,
  discard: DiscardPolicy.Old,
  // nats-server refuses less than 100 ms, and 0 means its 2-minute default.
  duplicate_window: 100 * NANOS_PER_MS,
  max_age: 24 * 3_600_000 * NANOS_PER_MS,
  max_bytes: 4 * 1024 ** 3,
  // The largest up message is a StatusReport (64 KiB payload) plus headers.
  max_msg_size: 64 * 1024 + 1024,
} satisfies Partial<StreamConfig>;

/**
 * Creates EF_UP, or brings the settings we own up to date if it exists (its replicas included: a
 * hub grown into a cluster gets its stream replicated). Replicas starting together may race to
 * create it; the loser finds it there. A stream made elsewhere with settings we cannot change
 * (retention, storage) is used as it is, with a warning, rather than stopping the gateway.
 */
export async function ensureEfUpStream(
  jsm: JetStreamManager,
  replicas: number,
  logger: Logger,
): Promise<void> {
  const config = { ...EF_UP_STREAM_CONFIG, num_replicas: replicas };
  const exists = () =>
    jsm.streams.info(EF_UP_STREAM).then(
      () => true,
      () => false,
    );
  if (!(await exists())) {
    try {
      await jsm.streams.add(config);
      logger.info({ stream: EF_UP_STREAM, replicas }, "stream created");
      return;
    } catch (error) {
      if (!(await exists())) throw error;
    }
  }
  const { name: _name, retention: _retention, storage: _storage, ...mutable } = config;
  try {
    const before = await jsm.streams.info(EF_UP_STREAM);
    await jsm.streams.update(EF_UP_STREAM, mutable);
    if (before.config.num_replicas !== replicas) {
      logger.info(
        { stream: EF_UP_STREAM, from: before.config.num_replicas, replicas },
        "stream replicas changed",
      );
      await untilStreamLeads(jsm, EF_UP_STREAM, replicas);
    }
  } catch (error) {
    logger.warn(
      { err: error, stream: EF_UP_STREAM },
      "cannot update the existing stream's settings; using it as it is",
    );
  }
}

/** The shared durable consumer: explicit acks, redelivery after 30 s, bounded in-flight work. */
export async function ensureGatewayConsumer(jsm: JetStreamManager): Promise<void> {
  const config = {
    durable_name: GATEWAY_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: 30_000 * NANOS_PER_MS,
    max_ack_pending: 20_000,
    // Poison messages are terminated by the handler; this bounds a handler that keeps crashing.
    max_deliver: 20,
  };
  // consumers.add is idempotent for an identical config, and updates the mutable fields otherwise.
  await jsm.consumers.add(EF_UP_STREAM, config);
}
