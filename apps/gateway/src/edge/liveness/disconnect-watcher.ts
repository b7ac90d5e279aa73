import { GATEWAY_QUEUE_GROUP } from "@edgefleet/agent-sdk/protocol";
import { type Db, Prisma, updateNodesWithStatusEvents } from "@edgefleet/db";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { z } from "zod";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import type { EdgeService } from "../service.js";

/** Where every server of the hub (and every linked site leaf) announces a closed client connection. */
export const DISCONNECT_EVENTS = "$SYS.ACCOUNT.*.DISCONNECT";

/** The part of nats-server's `io.nats.server.advisory.v1.client_disconnect` the watcher reads. */
const disconnectEventSchema = z.object({
  client: z.object({
    acc: z.string().regex(/^A[A-Z2-7]{55}$/),
    user: z.string().regex(/^U[A-Z2-7]{55}$/),
    kind: z.string().optional(),
    stop: z.iso.datetime({ offset: true }),
  }),
  reason: z.string().optional(),
});

/**
 * The server closing its own connections (a leaf or hub restart, an upgrade) is not the node going
 * away: the agent reconnects, to it or to another server, and says Hello; a server that does not
 * come back leaves its nodes to the heartbeat bound. Marking them offline made every node of a
 * restarted site flap offline and online (800 of 2,000 in the 20,000-node run).
 */
const NOT_THE_NODE_LEAVING = new Set(["Server Shutdown"]);

export interface Disconnect {
  /** The node's NATS user (nodes.public_key) and the account it was connected in. */
  user: string;
  account: string;
  /** When the server closed the connection (its clock). */
  stoppedAt: Date;
  /** When the gateway heard of it (this process's clock): the grace runs from here. */
  heardAt: number;
  /** The server's words for why it closed (nats-server's ClosedState: "Client Closed", "Stale Connection"…). */
  reason: string;
}

/**
 * Parses one DISCONNECT event. The account in the subject must be the client's: a site's system
 * link may publish its own organization's account's events only (siteSystemLinkUserJwt), so a
 * payload naming another account is a forgery and is refused. Events of other connection kinds
 * (leaf links, the gateway's own) and of users that are not nodes' (no U key) are not ours, and
 * neither is a server shutting down (NOT_THE_NODE_LEAVING).
 */
export function parseDisconnect(
  subject: string,
  data: Uint8Array,
  heardAt: number,
):
  | { ok: true; disconnect: Disconnect }
  | { ok: false; reason: "malformed" | "foreign_account" | "not_a_client" | "server_shutdown" } {
  let parsed: z.infer<typeof disconnectEventSchema>;
  try {
    const result = disconnectEventSchema.safeParse(JSON.parse(new TextDecoder().decode(data)));
    if (!result.success) return { ok: false, reason: "malformed" };
    parsed = result.data;
  } catch {
    return { ok: false, reason: "malformed" };
  }
  const subjectAccount = subject.split(".")[2];
  if (subjectAccount !== parsed.client.acc) return { ok: false, reason: "foreign_account" };
  if (parsed.client.kind !== undefined && parsed.client.kind !== "Client")
    return { ok: false, reason: "not_a_client" };
  if (NOT_THE_NODE_LEAVING.has(parsed.reason ?? "")) return { ok: false, reason: "server_shutdown" };
  return {
    ok: true,
    disconnect: {
      user: parsed.client.user,
      account: parsed.client.acc,
      stoppedAt: new Date(parsed.client.stop),
      heardAt,
      reason: parsed.reason ?? "",
    },
  };
}

export interface DisconnectWatcherOptions {
  /**
   * The gateway's system-account connection (enrollment's, which pushes account JWTs): the
   * watcher subscribes on it rather than opening a third one. Its owner closes it.
   */
  systemConnection: () => Promise<NatsConnection>;
  /**
   * How long a disconnect waits before it is acted on. An agent that reconnects within it (a
   * leaf restart, a network blip) says Hello again, which moves its last_seen_at past the
   * disconnect, and it stays online: no offline/online pair in its history for a blip.
   */
  graceMs: number;
}

/**
 * Marks nodes offline within seconds of their NATS connection closing, from the servers' own
 * DISCONNECT events, rather than after the heartbeat bound (3 intervals and slack). A site leaf's
 * events reach the hub over the site's system link. Heartbeats and the offline sweeper stay the
 * bound for what no server reports: a leaf that lost its hub link at that moment, a bundle
 * issued before its system link could publish, a half-open link that the server has not yet
 * pinged out. With several gateway replicas each event goes to one (queue group).
 */
export class DisconnectWatcher implements EdgeService {
  readonly name = "disconnects";
  private subscription: Subscription | null = null;
  private loop: Promise<void> = Promise.resolve();
  private pending = new Map<string, Disconnect>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly options: DisconnectWatcherOptions,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const connection = await this.options.systemConnection();
    const subscription = connection.subscribe(DISCONNECT_EVENTS, { queue: GATEWAY_QUEUE_GROUP });
    this.subscription = subscription;
    this.loop = (async () => {
      for await (const msg of subscription) this.hear(msg.subject, msg.data);
    })();
    // Checked at a quarter of the grace: a disconnect is acted on between 1 and 1.25 graces.
    this.timer = setInterval(() => void this.flush(), Math.max(50, Math.round(this.options.graceMs / 4)));
  }

  /** Takes one event; returns why it was refused, or null. */
  hear(subject: string, data: Uint8Array, now = Date.now()): string | null {
    const parsed = parseDisconnect(subject, data, now);
    if (!parsed.ok) {
      this.metrics.disconnectEvents.inc({ outcome: parsed.reason });
      if (parsed.reason === "malformed" || parsed.reason === "foreign_account")
        this.logger.warn({ subject, reason: parsed.reason }, "disconnect event refused");
      return parsed.reason;
    }
    // A later disconnect of the same user replaces an earlier one (its grace starts again).
    this.pending.set(parsed.disconnect.user, parsed.disconnect);
    return null;
  }

  /** Acts on the disconnects whose grace has passed (all of them with `all`); serialised. */
  flush(all = false): Promise<void> {
    this.flushing = this.flushing.then(() => this.write(all ? Number.POSITIVE_INFINITY : Date.now()));
    return this.flushing;
  }

  private async write(now: number): Promise<void> {
    const due: Disconnect[] = [];
    for (const [user, disconnect] of this.pending)
      if (now - disconnect.heardAt >= this.options.graceMs) {
        due.push(disconnect);
        this.pending.delete(user);
      }
    if (due.length === 0) return;
    try {
      // The node must belong to the account it was connected in, be online, and not have said
      // Hello (or been seen) since the server closed the connection: then it reconnected.
      const { updated } = await updateNodesWithStatusEvents(this.db, {
        where: Prisma.sql`id IN (
          SELECT n.id FROM node n
          JOIN organization o ON o.id = n.organization_id
          JOIN unnest(${due.map((d) => d.user)}::text[], ${due.map((d) => d.account)}::text[],
                      ${due.map((d) => d.stoppedAt.toISOString())}::timestamptz[]) AS d(user_key, account, stopped_at)
            ON d.user_key = n.public_key AND d.account = o.nats_account_key
          WHERE n.status = 'online' AND (n.last_seen_at IS NULL OR n.last_seen_at < d.stopped_at))`,
        set: Prisma.sql`status = 'offline', updated_at = now()`,
        reason: "disconnected",
      });
      this.metrics.disconnectEvents.inc({ outcome: "offline" }, updated);
      this.metrics.disconnectEvents.inc({ outcome: "no_change" }, due.length - updated);
      if (updated > 0) {
        const reasons: Record<string, number> = {};
        for (const disconnect of due) reasons[disconnect.reason] = (reasons[disconnect.reason] ?? 0) + 1;
        this.logger.info(
          { nodes: updated, heard: due.length, reasons },
          "nodes marked offline: their connection closed",
        );
      }
    } catch (error) {
      // Put them back: the next flush tries again (a later event of the same user wins).
      for (const disconnect of due)
        if (!this.pending.has(disconnect.user)) this.pending.set(disconnect.user, disconnect);
      this.logger.error({ err: error, nodes: due.length }, "disconnect flush failed; will retry");
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // The connection may already be draining (enrollment stops beside us): then it ends the loop.
    if (this.subscription && !this.subscription.isClosed()) this.subscription.unsubscribe();
    await this.loop;
    await this.flushing;
  }
}
