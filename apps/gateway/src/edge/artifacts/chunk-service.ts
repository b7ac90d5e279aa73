import {
  type ArtifactChunkReply,
  artifactBucket,
  encodeMessage,
  MAX_ARTIFACT_CHUNK_BYTES,
  PROTOCOL_VERSION,
} from "@edgefleet/agent-sdk/protocol";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Logger } from "../../logger.js";
import type { SiteUplinkPacer } from "../../sites/uplink-pacer.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import { type IntakeDeps, intakeUpMessage } from "../intake.js";
import type { EdgeNode } from "../node-directory.js";
import type { EdgeService } from "../service.js";
import { FreshWork, subscribeFresh } from "../work/fresh-work.js";
import type { ArtifactAccess } from "./artifact-access.js";
import type { ArtifactCache } from "./artifact-cache.js";
import type { ChunkReplies } from "./chunk-replies.js";

/**
 * Artifact chunks (request/reply on `ef.t.*.up.*.art`, queue group `gateway`): a node asks for a
 * byte range of an object by name; the gateway answers from its organization's bucket
 * `ART_<org>` (through the disk cache) if the node is meant to run a version with that artifact,
 * else with a typed error. Identity comes from the subject: the node's organization picks the
 * bucket, never anything in the payload. Replies just sent are kept encoded in memory
 * (ChunkReplies): a fleet pulling one artifact asks for the same chunks over and over.
 */
/**
 * Chunks handled at once per gateway: bounds memory (a 128 KiB buffer each) and open files when a
 * whole fleet pulls at the same moment; later requests wait in the service's queue.
 */
const MAX_CONCURRENT_CHUNKS = 32;
/**
 * A request that waited longer than this in the queue is dropped unanswered: its agent stops
 * waiting after 10 s (docs/protocol.md, "Flow control") and asks again, so answering it would
 * only delay the requests still wanted. Without this, a fleet whose requests queue for longer
 * than the agents' timeout makes the gateway answer nobody but agents who already gave up.
 */
export const STALE_CHUNK_REQUEST_MS = 8_000;

export class ArtifactChunkService implements EdgeService {
  readonly name = "artifact-chunks";
  private subscriptions: Subscription[] = [];
  private readonly work: FreshWork<Msg>;
  /** Answers held back by a site's bandwidth budget: they wait outside the concurrency bound. */
  private readonly paced = new Set<Promise<void>>();

  constructor(
    private readonly intake: IntakeDeps,
    private readonly access: ArtifactAccess,
    private readonly cache: ArtifactCache,
    private readonly replies: ChunkReplies,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
    private readonly pacer: SiteUplinkPacer | null = null,
  ) {
    this.work = new FreshWork<Msg>({
      task: "artifact-chunks",
      concurrency: MAX_CONCURRENT_CHUNKS,
      batchSize: 1,
      maxWaitMs: STALE_CHUNK_REQUEST_MS,
      handle: ([msg]) => this.handle(msg as Msg),
      onDropped: () => this.metrics.artifactChunks.inc({ result: "dropped_stale" }),
      logger,
    });
  }

  async start(platform: NatsConnection): Promise<void> {
    this.subscriptions = subscribeFresh(platform, "art", this.work, this.logger);
  }

  async stop(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
    // What already arrived is still answered (or dropped as stale), as the queue group expects.
    await this.work.drained();
    await Promise.all(this.paced);
  }

  private async handle(msg: Msg): Promise<void> {
    const taken = await intakeUpMessage(
      this.intake,
      msg.subject,
      msg.data,
      "art",
      "artifactChunkRequest",
    ).catch((error: unknown) => {
      this.logger.error({ err: error, subject: msg.subject }, "artifact request intake failed");
      return null;
    });
    // No answer to a rejected request (bad subject or payload, unknown or revoked node): counted.
    if (!taken) return;
    const { node, msg: request } = taken;
    const answer = (reply: ArtifactChunkReply, result: string) => {
      msg.respond(encodeMessage("artifactChunkReply", reply));
      this.metrics.artifactChunks.inc({ result });
    };
    const refuse = (err: NonNullable<ArtifactChunkReply["err"]>, why?: string) =>
      answer({ v: PROTOCOL_VERSION, err, ...(why ? { why: why.slice(0, 256) } : {}) }, err);
    try {
      if (!(await this.access.allowed(node, request.obj))) {
        refuse("not_allowed", "this node is not meant to run a version with this artifact");
        return;
      }
      const bucket = artifactBucket(node.org);
      const len = Math.min(request.len, MAX_ARTIFACT_CHUNK_BYTES);
      const known = this.replies.get(bucket, request.obj, request.off, len);
      if (known) {
        await this.send(msg, known.payload, node, known.dataBytes);
        return;
      }
      const artifact = await this.cache.open(bucket, request.obj);
      if (!artifact.ok) {
        refuse(artifact.err, artifact.why);
        return;
      }
      if (request.off > artifact.size) {
        refuse("bad_range", `offset ${request.off} is past the end (${artifact.size} bytes)`);
        return;
      }
      const data = await artifact.read(request.off, len);
      const payload = encodeMessage("artifactChunkReply", {
        v: PROTOCOL_VERSION,
        off: request.off,
        size: artifact.size,
        data,
      });
      this.replies.set(bucket, request.obj, request.off, len, { payload, dataBytes: data.byteLength });
      await this.send(msg, payload, node, data.byteLength);
    } catch (error) {
      this.logger.error({ err: error, subject: msg.subject }, "artifact chunk failed");
      refuse("unavailable", "the gateway could not read the artifact");
    }
  }

  /** Answers now, or when the node's site budget allows (uplink-pacer.ts). */
  private async send(msg: Msg, payload: Uint8Array, node: EdgeNode, dataBytes: number): Promise<void> {
    const reply = () => {
      msg.respond(payload);
      this.metrics.artifactChunks.inc({ result: "ok" });
    };
    const paced = await this.pacer?.pace(node, dataBytes, reply);
    if (paced) {
      const tracked: Promise<void> = paced.sent.finally(() => this.paced.delete(tracked));
      this.paced.add(tracked);
    } else reply();
    this.metrics.accepted.inc({ type: "art" });
    this.metrics.artifactBytesServed.inc({ org: node.organizationId }, dataBytes);
  }
}
