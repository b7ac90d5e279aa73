import { encodeMessage, type Hello, type HelloReply, PROTOCOL_VERSION } from "@edgefleet/agent-sdk/protocol";
import type { OrgHistograms } from "@edgefleet/alerts";
import {
  type Db,
  type DesiredDelta,
  desiredDeltasSince,
  Prisma,
  updateNodesWithStatusEvents,
} from "@edgefleet/db";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Logger } from "../../logger.js";
import type { CredentialIssuer } from "../credentials/credential-issuer.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import { type IntakeDeps, intakeUpMessage, type SubjectStanding } from "../intake.js";
import type { EdgeNode } from "../node-directory.js";
import type { EdgeService } from "../service.js";
import { FreshWork, subscribeFresh } from "../work/fresh-work.js";
import { toWireDelta } from "./wire-delta.js";

/**
 * Hellos are answered in batches: one SELECT, one UPDATE and (for nodes behind) one delta
 * transaction per batch, whatever its size. Handled one by one, each Hello took ~8 round trips;
 * a handler per Hello took every Postgres connection in a reconnect storm of 20,000 agents, and
 * all timed out together (bench:scale: 260,000 failed Hellos in 4 minutes). Two batches in flight
 * leave the pool's other connections to liveness, ingest and the controller.
 */
const HELLO_BATCH_SIZE = 250;
const MAX_CONCURRENT_HELLO_BATCHES = 2;
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
      concurrency: MAX_CONCURRENT_HELLO_BATCHES,
      batchSize: HELLO_BATCH_SIZE,
      maxWaitMs: STALE_HELLO_MS,
      handle: (msgs) => this.handleBatch(msgs),
      onDropped: () => this.metrics.rejected.inc({ type: "hello", reason: "stale" }),
      logger,
    });
  }

  async start(platform: NatsConnection): Promise<void> {
    this.subscriptions = subscribeFresh(platform, "hello", this.work, this.logger);
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

  private reply(msg: Msg, delta: DesiredDelta | null, jwt: string | undefined): void {
    const reply: HelloReply = {
      v: PROTOCOL_VERSION,
      hb: this.config.heartbeatIntervalS,
      mx: this.config.metricsIntervalS,
      d: delta ? toWireDelta(delta) : null,
      // The metrics batcher counts reports as signs of life: agents skip heartbeats while they flow.
      rq: true,
      ...(jwt ? { jwt } : {}),
    };
    msg.respond(encodeMessage("helloReply", reply));
    this.metrics.accepted.inc({ type: "hello" });
  }

  private async handleBatch(msgs: Msg[]): Promise<void> {
    const received = performance.now();
    try {
      // Lookups arriving together share one directory query.
      const taken = await Promise.all(
        msgs.map(async (msg) => {
          const intake = await intakeUpMessage(this.intake, msg.subject, msg.data, "hello", "hello", {
            acceptMoved: true,
          });
          // No answer to a rejected Hello: the agent's request times out and it retries with backoff.
          return intake ? { ...intake, reply: msg } : null;
        }),
      );
      const hellos: Array<NonNullable<(typeof taken)[number]>> = [];
      const moved: typeof hellos = [];
      for (const hello of taken) if (hello) (hello.standing === "moved" ? moved : hellos).push(hello);
      await Promise.all([this.answerMoved(moved), this.answerCurrent(hellos, received)]);
    } catch (error) {
      this.logger.error({ err: error, hellos: msgs.length }, "hello handling failed");
    }
  }

  /** On a site the node was moved away from: new credentials, nothing else (no delta, not online). */
  private async answerMoved(hellos: Array<{ node: EdgeNode; reply: Msg }>): Promise<void> {
    await Promise.all(
      hellos.map(async ({ node, reply }) => {
        const jwt = await this.newCredentials(node.id);
        if (jwt) this.reply(reply, null, jwt);
      }),
    );
  }

  private async answerCurrent(
    hellos: Array<{ node: EdgeNode; msg: Hello; standing: SubjectStanding; reply: Msg }>,
    received: number,
  ): Promise<void> {
    if (hellos.length === 0) return;
    // A node that said Hello twice (a retry queued behind the first): its last one is recorded.
    const latest = new Map(hellos.map((hello) => [hello.node.id, hello]));
    const nodes = [...latest.values()];
    const ids = nodes.map(({ node }) => node.id);
    // Before the UPDATE resets it: a node reporting revision 0 after it had applied one lost its
    // state, and what it gets now is a re-list (a new node's first sync from 0 is not one).
    const before = new Map(
      (
        await this.db.$queryRaw<Array<{ id: string; applied: number; desired: number }>>(Prisma.sql`
          SELECT id::text, applied_revision AS applied, desired_revision AS desired
          FROM node WHERE id = ANY(${ids}::uuid[])`)
      ).map((row) => [row.id, row]),
    );
    // Where each node listens from now on: the site of its Hello (null: layout 1).
    const subjectSites = nodes.map(({ node, standing }) => (standing === "current" ? node.site : null));
    // Nodes coming online get a status history row and the console a notification, in this statement.
    await updateNodesWithStatusEvents(this.db, {
      where: Prisma.sql`id = ANY(${ids}::uuid[]) AND status <> 'revoked'`,
      perNode: Prisma.sql`unnest(${ids}::uuid[], ${nodes.map(({ msg }) => msg.av)}::text[],
        ${nodes.map(({ msg }) => msg.boot)}::text[], ${nodes.map(({ msg }) => msg.rev)}::int[],
        ${subjectSites}::text[]) AS per_node(node_id, av, boot, rev, subject_site)`,
      set: Prisma.sql`agent_version = per_node.av, boot_id = per_node.boot,
          status = 'online', last_seen_at = now(), updated_at = now(),
          applied_revision = CASE WHEN per_node.rev <= desired_revision THEN per_node.rev ELSE 0 END,
          subject_site = per_node.subject_site`,
      reason: "hello",
    });
    for (const [index, { node }] of nodes.entries())
      if (node.subjectSite !== subjectSites[index]) this.intake.directory.forget(node.org, node.wid);
    // Up to date (every reconnect of a settled fleet, e.g. a storm of 10,000): no delta
    // transaction. A revision raised meanwhile reaches the node through the publisher's NOTIFY.
    const behind = nodes.filter(({ node, msg }) => before.get(node.id)?.desired !== msg.rev);
    const deltas = await desiredDeltasSince(
      this.db,
      behind.map(({ node, msg }) => ({ nodeId: node.id, fromRevision: msg.rev })),
    );
    // By node: a node deleted meanwhile has no answer (and its Hello none either).
    const deltaOf = new Map(deltas.map((answer) => [answer.nodeId, answer.delta]));
    await Promise.all(
      hellos.map(async ({ node, msg, standing, reply }) => {
        // Layout 1: credentials for its site (an agent that cannot use them ignores the field).
        const jwt = standing === "layout1" ? await this.newCredentials(node.id) : undefined;
        this.connectToOnline?.observe(node.organizationId, (performance.now() - received) / 1000);
        // A retry of the node's own Hello, queued behind it, gets the answer of the last one.
        const delta = deltaOf.get(node.id) ?? null;
        this.reply(reply, delta, jwt);
        if (delta) {
          this.metrics.desiredDeltas.inc({ via: "hello" });
          // From 0 although the node had applied a revision: it reported one we never gave it, or
          // lost its state.
          const hadApplied = msg.rev === 0 && (before.get(node.id)?.applied ?? 0) > 0;
          if (delta.from === 0 && (msg.rev > 0 || hadApplied))
            this.metrics.desiredFullLists.inc({ via: "hello" });
        }
      }),
    );
  }
}
