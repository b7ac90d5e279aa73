import {
  type ArtifactChunkReply,
  artifactBucket,
  encodeMessage,
  GATEWAY_QUEUE_GROUP,
  MAX_ARTIFACT_CHUNK_BYTES,
  PROTOCOL_VERSION,
  platformUpWildcard,
} from "@edgefleet/agent-sdk/protocol";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Logger } from "../../logger.js";
import type { SiteUplinkPacer } from "../../sites/uplink-pacer.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import { type IntakeDeps, intakeUpMessage } from "../intake.js";
import type { EdgeService } from "../service.js";
import type { ArtifactAccess } from "./artifact-access.js";
import type { ArtifactCache } from "./artifact-cache.js";

/**
 * Artifact chunks (request/reply on `ef.t.*.up.*.art`, queue group `gateway`): a node asks for a
 * byte range of an object by name; the gateway answers from its organization's bucket
 * `ART_<org>` (through the disk cache) if the node is meant to run a version with that artifact,
 * else with a typed error. Identity comes from the subject: the node's organization picks the
 * bucket, never anything in the payload.
 */
/**
 * Chunks handled at once per gateway: bounds memory (a 128 KiB buffer each) and open files when a
 * whole fleet pulls at the same moment; later requests wait in the subscription's queue.
 */
const MAX_CONCURRENT_CHUNKS = 32;

export class ArtifactChunkService implements EdgeService {
  readonly name = "artifact-chunks";
  private subscription: Subscription | null = null;
  private loop: Promise<void> = Promise.resolve();
  private readonly inFlight = new Set<Promise<void>>();
  /** Answers held back by a site's bandwidth budget: they wait outside the concurrency bound. */
  private readonly paced = new Set<Promise<void>>();

  constructor(
    private readonly intake: IntakeDeps,
    private readonly access: ArtifactAccess,
    private readonly cache: ArtifactCache,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
    private readonly pacer: SiteUplinkPacer | null = null,
  ) {}

  async start(platform: NatsConnection): Promise<void> {
    const subscription = platform.subscribe(platformUpWildcard("art"), { queue: GATEWAY_QUEUE_GROUP });
    this.subscription = subscription;
    this.loop = (async () => {
      for await (const msg of subscription) {
        while (this.inFlight.size >= MAX_CONCURRENT_CHUNKS) await Promise.race(this.inFlight);
        const handled = this.handle(msg).finally(() => this.inFlight.delete(handled));
        this.inFlight.add(handled);
      }
    })();
  }

  async stop(): Promise<void> {
    this.subscription?.unsubscribe();
    this.subscription = null;
    await this.loop;
    await Promise.all(this.inFlight);
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
      const artifact = await this.cache.open(artifactBucket(node.org), request.obj);
      if (!artifact.ok) {
        refuse(artifact.err, artifact.why);
        return;
      }
      if (request.off > artifact.size) {
        refuse("bad_range", `offset ${request.off} is past the end (${artifact.size} bytes)`);
        return;
      }
      const data = await artifact.read(request.off, Math.min(request.len, MAX_ARTIFACT_CHUNK_BYTES));
      const reply = () => answer({ v: PROTOCOL_VERSION, off: request.off, size: artifact.size, data }, "ok");
      // A site's bandwidth budget queues the answer (uplink-pacer.ts), outside the concurrency bound.
      const paced = await this.pacer?.pace(node, data.byteLength, reply);
      if (paced) {
        const tracked: Promise<void> = paced.sent.finally(() => this.paced.delete(tracked));
        this.paced.add(tracked);
      } else reply();
      this.metrics.accepted.inc({ type: "art" });
      this.metrics.artifactBytesServed.inc({ org: node.organizationId }, data.byteLength);
    } catch (error) {
      this.logger.error({ err: error, subject: msg.subject }, "artifact chunk failed");
      refuse("unavailable", "the gateway could not read the artifact");
    }
  }
}
