import {
  encodeMessage,
  GATEWAY_QUEUE_GROUP,
  type HelloReply,
  PROTOCOL_VERSION,
  platformUpWildcards,
} from "@edgefleet/agent-sdk/protocol";
import type { OrgHistograms } from "@edgefleet/alerts";
import { type Db, desiredDeltaSince, Prisma, updateNodesWithStatusEvents } from "@edgefleet/db";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Logger } from "../../logger.js";
import type { CredentialIssuer } from "../credentials/credential-issuer.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import { type IntakeDeps, intakeUpMessage } from "../intake.js";
import type { EdgeService } from "../service.js";
import { FreshWork } from "../work/fresh-work.js";
import { toWireDelta } from "./wire-delta.js";

/**
 * Hellos handled at once per gateway. Each takes a few Postgres round trips and, with a delta, a
 * transaction; the pool has 10 connections, shared with liveness, ingest and the controller.
 * Unbounded, a reconnect storm of 20,000 agents started a handler per Hello, every one waited for
 * a connection, and all timed out together (bench:scale: 260,000 failed Hellos in 4 minutes).
 */
const MAX_CONCURRENT_HELLOS = 6;
/**
 * A Hello queued longer than this is dropped unanswered: the agents stop waiting after 5 s
 * (`RequestTimeout`) and say Hello again with backoff, so answering it would be wasted work.
 */
export const STALE_HELLO_MS = 4_000;

export interface HelloConfig {
  heartbeatIntervalS: number;
  metricsIntervalS: number;
}

/**
 * Hello (request/reply on `ef.t.*.up.*.*.hello`, and layout 1's `ef.t.*.up.*.hello`, queue group
 * `gateway`): records the agent's version and boot id, marks the node online, and answers with the
 * intervals and the delta since the revision the agent last applied: null when it is up to date,
 * never a re-list. A Hello on subjects that are not the node's current ones is answered with new
 * credentials (docs/protocol.md "Credentials"): on layout 1, with everything else as before (an
 * agent that cannot use them keeps working); on a site the node was moved away from, with nothing
 * else (the node is not online there: it says Hello again with the new ones).
 */
export class HelloService implements EdgeService {
  readonly name = "hello";
  private subscriptions: Subscription[] = [];
  private readonly work: FreshWork<Msg>;

  constructor(
    private readonly db: Db,
    private readonly intake: IntakeDeps,
    private readonly config: HelloConfig,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
    /** Hello received → the node online in Postgres, per organization (its SLO page). */
    private readonly connectToOnline: OrgHistograms | null = null,
    /** Mints new credentials; null without tenancy secrets (then nobody gets any). */
    private readonly issuer: CredentialIssuer | null = null,
  ) {
    this.work = new FreshWork<Msg>({
      task: "hello",
      concurrency: MAX_CONCURRENT_HELLOS,
      maxWaitMs: STALE_HELLO_MS,
      handle: (msg) => this.handle(msg),
      onDropped: () => this.metrics.rejected.inc({ type: "hello", reason: "stale" }),
      logger,
    });
  }

  async start(platform: NatsConnection): Promise<void> {
    this.subscriptions = platformUpWildcards("hello").map((wildcard) =>
      platform.subscribe(wildcard, {
        queue: GATEWAY_QUEUE_GROUP,
        // A callback, not an iterator: the arrival time is taken here, to drop stale Hellos.
        callback: (error, msg) => {
          if (error) {
            this.logger.error({ err: error }, "hello subscription failed");
            return;
          }
          this.work.push(msg);
        },
      }),
    );
  }

  async stop(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
    await this.work.drained();
  }

  /** New credentials for the node's current site, or undefined (no issuer, or none to give). */
  private async newCredentials(nodeId: string): Promise<string | undefined> {
    const issued = await this.issuer?.issue(nodeId, "reissue");
    if (!issued) return undefined;
    this.metrics.credentialsIssued.inc({ via: "hello" });
    return issued.jwt;
  }

  private async revisions(nodeId: string): Promise<{ applied: number; desired: number } | undefined> {
    const [row] = await this.db.$queryRaw<Array<{ applied: number; desired: number }>>(Prisma.sql`
      SELECT applied_revision AS applied, desired_revision AS desired FROM node WHERE id = ${nodeId}::uuid`);
    return row;
  }

  private async handle(msg: Msg): Promise<void> {
    const received = performance.now();
    try {
      const taken = await intakeUpMessage(this.intake, msg.subject, msg.data, "hello", "hello", {
        acceptMoved: true,
      });
      // No answer to a rejected Hello: the agent's request times out and it retries with backoff.
      if (!taken) return;
      const { node, msg: hello, standing } = taken;
      if (standing === "moved") {
        // On the site it was moved away from: new credentials, nothing else (no delta, not online).
        const jwt = await this.newCredentials(node.id);
        if (!jwt) return;
        const reply: HelloReply = {
          v: PROTOCOL_VERSION,
          hb: this.config.heartbeatIntervalS,
          mx: this.config.metricsIntervalS,
          d: null,
          jwt,
        };
        msg.respond(encodeMessage("helloReply", reply));
        this.metrics.accepted.inc({ type: "hello" });
        return;
      }
      // Where the node listens from now on: the site of this Hello (null: layout 1).
      const subjectSite = standing === "current" ? node.site : null;
      // Before the UPDATE resets it: a node reporting revision 0 after it had applied one lost its
      // state, and what it gets now is a re-list (a new node's first sync from 0 is not one).
      const before = await this.revisions(node.id);
      const hadApplied = hello.rev === 0 && (before?.applied ?? 0) > 0;
      // A node coming online gets a status history row and the console a notification, in this statement.
      await updateNodesWithStatusEvents(this.db, {
        where: Prisma.sql`id = ${node.id}::uuid AND status <> 'revoked'`,
        set: Prisma.sql`agent_version = ${hello.av}, boot_id = ${hello.boot},
          status = 'online', last_seen_at = now(), updated_at = now(),
          applied_revision = CASE WHEN ${hello.rev} <= desired_revision THEN ${hello.rev} ELSE 0 END,
          subject_site = ${subjectSite}`,
        reason: "hello",
      });
      if (node.subjectSite !== subjectSite) this.intake.directory.forget(node.org, node.wid);
      // Layout 1: credentials for its site (an agent that cannot use them ignores the field).
      const jwt = standing === "layout1" ? await this.newCredentials(node.id) : undefined;
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
        ...(jwt ? { jwt } : {}),
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
