import {
  encodeMessage,
  GATEWAY_QUEUE_GROUP,
  type HelloReply,
  PROTOCOL_VERSION,
  platformUpWildcard,
} from "@edgefleet/agent-sdk/protocol";
import type { OrgHistograms } from "@edgefleet/alerts";
import { type Db, desiredDeltaSince, Prisma, updateNodesWithStatusEvents } from "@edgefleet/db";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import { runInBackground } from "../../background.js";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import { type IntakeDeps, intakeUpMessage } from "../intake.js";
import type { EdgeService } from "../service.js";
import { toWireDelta } from "./wire-delta.js";

export interface HelloConfig {
  heartbeatIntervalS: number;
  metricsIntervalS: number;
}

/**
 * Hello (request/reply on `ef.t.*.up.*.hello`, queue group `gateway`): records the agent's
 * version and boot id, marks the node online, and answers with the intervals and the delta since
 * the revision the agent last applied: null when it is up to date, never a re-list.
 */
export class HelloService implements EdgeService {
  readonly name = "hello";
  private subscription: Subscription | null = null;
  private loop: Promise<void> = Promise.resolve();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly intake: IntakeDeps,
    private readonly config: HelloConfig,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
    /** Hello received → the node online in Postgres, per organization (its SLO page). */
    private readonly connectToOnline: OrgHistograms | null = null,
  ) {}

  async start(platform: NatsConnection): Promise<void> {
    const subscription = platform.subscribe(platformUpWildcard("hello"), { queue: GATEWAY_QUEUE_GROUP });
    this.subscription = subscription;
    this.loop = (async () => {
      for await (const msg of subscription) {
        const handled = runInBackground(this.logger, "hello", () => this.handle(msg)).finally(() =>
          this.inFlight.delete(handled),
        );
        this.inFlight.add(handled);
      }
    })();
  }

  async stop(): Promise<void> {
    this.subscription?.unsubscribe();
    this.subscription = null;
    await this.loop;
    await Promise.all(this.inFlight);
  }

  private async revisions(nodeId: string): Promise<{ applied: number; desired: number } | undefined> {
    const [row] = await this.db.$queryRaw<Array<{ applied: number; desired: number }>>(Prisma.sql`
      SELECT applied_revision AS applied, desired_revision AS desired FROM node WHERE id = ${nodeId}::uuid`);
    return row;
  }

  private async handle(msg: Msg): Promise<void> {
    const received = performance.now();
    try {
      const taken = await intakeUpMessage(this.intake, msg.subject, msg.data, "hello", "hello");
      // No answer to a rejected Hello: the agent's request times out and it retries with backoff.
      if (!taken) return;
      const { node, msg: hello } = taken;
      // Before the UPDATE resets it: a node reporting revision 0 after it had applied one lost its
      // state, and what it gets now is a re-list (a new node's first sync from 0 is not one).
      const before = await this.revisions(node.id);
      const hadApplied = hello.rev === 0 && (before?.applied ?? 0) > 0;
      // A node coming online gets a status history row and the console a notification, in this statement.
      await updateNodesWithStatusEvents(this.db, {
        where: Prisma.sql`id = ${node.id}::uuid AND status <> 'revoked'`,
        set: Prisma.sql`agent_version = ${hello.av}, boot_id = ${hello.boot},
          status = 'online', last_seen_at = now(), updated_at = now(),
          applied_revision = CASE WHEN ${hello.rev} <= desired_revision THEN ${hello.rev} ELSE 0 END`,
        reason: "hello",
      });
      this.connectToOnline?.observe(node.organizationId, (performance.now() - received) / 1000);
      // Up to date (every reconnect of a settled fleet, e.g. a storm of 10,000): no delta
      // transaction. A revision raised meanwhile reaches the node through the publisher's NOTIFY.
      const delta =
        before && before.desired === hello.rev ? null : await desiredDeltaSince(this.db, node.id, hello.rev);
      const reply: HelloReply = {
        v: PROTOCOL_VERSION,
        hb: this.config.heartbeatIntervalS,
        mx: this.config.metricsIntervalS,
        d: delta ? toWireDelta(delta) : null,
      };
      msg.respond(encodeMessage("helloReply", reply));
      this.metrics.accepted.inc({ type: "hello" });
      if (delta) {
        this.metrics.desiredDeltas.inc({ via: "hello" });
        // From 0 although the node had applied a revision: it reported one we never gave it, or
        // lost its state.
        if (delta.from === 0 && (hello.rev > 0 || hadApplied))
          this.metrics.desiredFullLists.inc({ via: "hello" });
      }
    } catch (error) {
      this.logger.error({ err: error, subject: msg.subject }, "hello handling failed");
    }
  }
}
