import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import {
  agentDownSubject,
  type DesiredPut,
  decodeMessage,
  encodeMessage,
  type Hello,
  type MessageOf,
  parseAgentUpSubject,
} from "../../src/protocol/index.js";
import { TEST_SITE, testAddress } from "./credentials.js";

/**
 * A small stand-in for the gateway's Hello handling in these tests (the real gateway is tested by
 * its own suite and by the lead's end-to-end tests): keeps a per-node desired history and answers
 * Hello with exactly the changes stamped after the agent's revision. It hears both subject
 * layouts, remembers on which site each node said Hello, and can hand a node new credentials in
 * its next HelloReply (`reissueAtHello`) or push them on its downlink (`pushCredentials`).
 */
export class TestPlatform {
  readonly hellos: Array<{ wid: string; site: string | null; hello: Hello }> = [];
  /** Revision-stamped desired changes per node, oldest first. */
  private readonly history = new Map<string, Array<{ rev: number; put?: DesiredPut; del?: string }>>();
  private readonly subscriptions: Subscription[] = [];
  /** The site each node last said Hello on (null: layout 1). */
  private readonly sites = new Map<string, string | null>();
  private readonly reissue = new Map<string, string>();

  constructor(
    private readonly nc: NatsConnection,
    /** What each HelloReply says: the intervals, and rq (reports quiet the heartbeat). */
    private readonly intervals: { hb: number; mx: number; rq?: boolean } = { hb: 1, mx: 1 },
  ) {}

  start(): void {
    for (const subject of ["ef.up.*.*.hello", "ef.up.*.hello"])
      this.subscriptions.push(
        this.nc.subscribe(subject, {
          callback: (error, msg) => {
            if (error) return;
            const from = parseAgentUpSubject(msg.subject);
            const decoded = decodeMessage("hello", msg.data);
            if (!from || !decoded.ok) return;
            this.hellos.push({ wid: from.wid, site: from.site, hello: decoded.msg });
            this.sites.set(from.wid, from.site);
            const jwt = this.reissue.get(from.wid);
            this.reissue.delete(from.wid);
            msg.respond(
              encodeMessage("helloReply", {
                v: 1,
                ...this.intervals,
                d: this.deltaSince(from.wid, decoded.msg.rev),
                ...(jwt ? { jwt } : {}),
              }),
            );
          },
        }),
      );
  }

  /** The node's next HelloReply carries these credentials. */
  reissueAtHello(wid: string, jwt: string): void {
    this.reissue.set(wid, jwt);
  }

  /** Pushes a CredentialsUpdate on the node's downlink (as the gateway does after a move). */
  pushCredentials(wid: string, jwt: string): void {
    this.nc.publish(this.downlink(wid), encodeMessage("credentialsUpdate", { v: 1, jwt }));
  }

  /** Where the node listens: its test address on the site it last said Hello on. */
  downlink(wid: string): string {
    const site = this.sites.has(wid) ? (this.sites.get(wid) ?? null) : TEST_SITE;
    return site === null ? `ef.down.${wid}` : agentDownSubject(testAddress(wid, site));
  }

  stop(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }

  revision(wid: string): number {
    return this.history.get(wid)?.at(-1)?.rev ?? 0;
  }

  /** Records a change and pushes it down as a DesiredDelta (from the previous revision). */
  change(wid: string, change: { put?: DesiredPut; del?: string }): MessageOf<"desiredDelta"> {
    const delta = this.record(wid, change);
    this.nc.publish(this.downlink(wid), encodeMessage("desiredDelta", delta));
    return delta;
  }

  /** Records a change whose DesiredDelta is never sent (the agent only learns of it by Hello). */
  record(wid: string, change: { put?: DesiredPut; del?: string }): MessageOf<"desiredDelta"> {
    const entries = this.history.get(wid) ?? [];
    this.history.set(wid, entries);
    const from = this.revision(wid);
    entries.push({ rev: from + 1, ...change });
    return {
      v: 1,
      from,
      to: from + 1,
      put: change.put ? [change.put] : [],
      del: change.del ? [change.del] : [],
    };
  }

  deltaSince(wid: string, rev: number): MessageOf<"helloReply">["d"] {
    const entries = (this.history.get(wid) ?? []).filter((entry) => entry.rev > rev);
    if (entries.length === 0) return null;
    const latest = new Map<string, { put?: DesiredPut; del?: string }>();
    for (const entry of entries) latest.set(entry.put?.app ?? (entry.del as string), entry);
    return {
      from: rev,
      to: this.revision(wid),
      put: [...latest.values()].flatMap((entry) => (entry.put ? [entry.put] : [])),
      del: [...latest.values()].flatMap((entry) => (entry.del !== undefined ? [entry.del] : [])),
    };
  }
}

export interface StoredUpMessage {
  subject: string;
  type: "st" | "mx" | "ack";
  msgId: string | undefined;
  body: MessageOf<"statusReport"> | MessageOf<"metricsReport"> | MessageOf<"desiredAck">;
}

/** Everything in EF_UP, in stream order, decoded. */
export async function readUpStream(nc: NatsConnection): Promise<StoredUpMessage[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info("EF_UP");
  const stored: StoredUpMessage[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const message = await jsm.streams.getMessage("EF_UP", { seq });
    if (!message) continue;
    const type = message.subject.split(".").at(-1) as StoredUpMessage["type"];
    const schema = type === "st" ? "statusReport" : type === "mx" ? "metricsReport" : "desiredAck";
    const decoded = decodeMessage(schema, message.data);
    if (!decoded.ok) throw new Error(`stream holds an undecodable ${type}: ${decoded.detail}`);
    stored.push({
      subject: message.subject,
      type,
      msgId: message.header?.get("Nats-Msg-Id") || undefined,
      body: decoded.msg,
    });
  }
  return stored;
}
