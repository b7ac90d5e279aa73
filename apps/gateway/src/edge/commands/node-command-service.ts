import { randomBytes } from "node:crypto";
import { probeChunkId } from "@edgefleet/agent-sdk/probe";
import {
  type Command,
  type CommandReply,
  type CommandRequest,
  decodeMessage,
  encodeMessage,
  formatWireId,
  MESSAGE_SIZE_LIMITS,
  type PlatformUpSubject,
  PROTOCOL_VERSION,
  type ProbeTarget,
  parsePlatformUpSubject,
  platformUpWildcards,
} from "@edgefleet/agent-sdk/protocol";
import { type Db, Prisma } from "@edgefleet/db";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import { Counter, type Registry } from "prom-client";
import type { Logger } from "../../logger.js";
import { METRIC_PREFIX } from "../../metrics.js";
import type { Downlinks, DownlinkTarget } from "../credentials/downlinks.js";
import type { EdgeService } from "../service.js";
import {
  CommandLimits,
  type CommandLimitsConfig,
  DEFAULT_COMMAND_LIMITS,
  DEFAULT_LOG_LIMITS,
  DEFAULT_PROBE_LIMITS,
} from "./command-limits.js";

/** Why a command produced no answer from the node (the gateway's own codes, next to the node's). */
export const GATEWAY_COMMAND_ERRORS = [
  "not_found",
  "revoked",
  "offline",
  "busy",
  "timeout",
  "bad_reply",
  "unavailable",
] as const;
export type GatewayCommandError = (typeof GATEWAY_COMMAND_ERRORS)[number];

/** One node's outcome. `result` holds the reply's result fields (inst, hl, diag, rep). */
export type CommandOutcome =
  | { nodeId: string; ok: true; ms: number; result: Omit<CommandReply, "v" | "id" | "ok" | "err" | "why"> }
  | { nodeId: string; ok: false; ms: number; code: string; error: string };

export interface CommandInput {
  organizationId: string;
  nodeIds: string[];
  cmd: Command;
  app?: string;
  timeoutMs: number;
}

interface Pending {
  org: string;
  wid: string;
  /** The site the request went down on: a reply counts only on that site's subject (null: layout 1). */
  site: string | null;
  finish: (outcome: { ok: true; reply: CommandReply } | { ok: false; code: string; error: string }) => void;
  /** A stream (a log session): every reply goes here, and it stays pending until it ends. */
  stream?: (reply: CommandReply) => void;
  /** A hub probe: its chunks on `ef.up.<wid>.prb` are answered while it is pending. */
  probe?: boolean;
}

/** A node the inventory says may be asked now, with its subject tokens. */
export interface CommandTarget extends DownlinkTarget {
  nodeId: string;
  name: string;
}

interface TargetRow {
  id: string;
  name: string;
  status: string;
  revoked: boolean;
  last_seen_at: Date | null;
  org: bigint;
  wid: bigint;
  subject_site: string | null;
}

/**
 * Commands to nodes (docs/protocol.md, "Commands"): a CommandRequest published on the node's
 * downlink, its CommandReply heard on `ef.t.*.up.*.*.cmd` (and layout 1's `ef.t.*.up.*.cmd`). Every replica hears every reply (no queue
 * group): the one whose request id it is resolves it; ids carry a per-process prefix, so a replica
 * ignores the others' replies without counting them. A reply counts only from the node the
 * request went to: the subject, which the server let through, must name that node, on the site
 * whose downlink the request went down (issue 8 #2: another site's leaf cannot answer for it).
 *
 * Never waits for a timeout it can predict: a node the inventory has offline, revoked or in
 * another organization is answered at once. A reply that is not a valid CommandReply (garbage, or
 * more than the 128 KiB limit, refused unread) fails that node's pending commands with `bad_reply`.
 */
export class NodeCommandService implements EdgeService {
  readonly name = "node-commands";
  private platform: NatsConnection | null = null;
  private subscriptions: Subscription[] = [];
  private readonly pending = new Map<string, Pending>();
  /** This process's request id prefix. */
  private readonly prefix = randomBytes(4).toString("hex");
  private sequence = 0;
  private readonly limits: CommandLimits;
  /** Live log sessions and probes have limits of their own (issue 13, "Limits"). */
  readonly logLimits: CommandLimits;
  private readonly probeLimits: CommandLimits;
  private readonly commands: Counter<"cmd" | "result">;
  private readonly replies: Counter<"result">;

  constructor(
    private readonly db: Db,
    private readonly downlinks: Downlinks,
    registry: Registry,
    private readonly logger: Logger,
    limits: CommandLimitsConfig = DEFAULT_COMMAND_LIMITS,
    logLimits: CommandLimitsConfig = DEFAULT_LOG_LIMITS,
    probeLimits: CommandLimitsConfig = DEFAULT_PROBE_LIMITS,
  ) {
    this.limits = new CommandLimits(limits, "command");
    this.logLimits = new CommandLimits(logLimits, "log session");
    this.probeLimits = new CommandLimits(probeLimits, "probe");
    this.commands = new Counter({
      name: `${METRIC_PREFIX}node_commands_total`,
      help: "Commands to nodes, by command and result (ok, a node's error code or the gateway's)",
      labelNames: ["cmd", "result"] as const,
      registers: [registry],
    });
    this.replies = new Counter({
      name: `${METRIC_PREFIX}node_command_replies_total`,
      help: "Command replies heard, by result (matched, late, bad_subject, bad_reply)",
      labelNames: ["result"] as const,
      registers: [registry],
    });
  }

  async start(platform: NatsConnection): Promise<void> {
    this.platform = platform;
    for (const wildcard of platformUpWildcards("cmd"))
      this.subscriptions.push(
        platform.subscribe(wildcard, {
          callback: (error, msg) => {
            if (!error) this.onReply(msg);
          },
        }),
      );
    for (const wildcard of platformUpWildcards("prb"))
      this.subscriptions.push(
        platform.subscribe(wildcard, {
          callback: (error, msg) => {
            if (!error) this.onProbeChunk(msg);
          },
        }),
      );
  }

  async stop(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
    for (const pending of this.pending.values())
      pending.finish({ ok: false, code: "unavailable", error: "the gateway is shutting down" });
    this.platform = null;
  }

  /** Runs one command on each node (in parallel), each with its own outcome. */
  async run(input: CommandInput): Promise<CommandOutcome[]> {
    const ids = [...new Set(input.nodeIds)];
    const rows = await this.db.$queryRaw<TargetRow[]>(Prisma.sql`
      SELECT n.id, n.name, n.status::text AS status, (n.status = 'revoked' OR n.revoked_at IS NOT NULL) AS revoked,
             n.last_seen_at, o.wire_id AS org, n.wire_id AS wid, n.subject_site
      FROM node n JOIN organization o ON o.id = n.organization_id
      WHERE n.organization_id = ${input.organizationId}::uuid AND n.id = ANY(${ids}::uuid[])`);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const outcomes = await Promise.all(ids.map((nodeId) => this.runOne(input, nodeId, byId.get(nodeId))));
    for (const outcome of outcomes)
      this.commands.inc({ cmd: input.cmd, result: outcome.ok ? "ok" : outcome.code });
    return outcomes;
  }

  /**
   * The node a stream or probe goes to, checked like a command's: another organization's node is
   * `not_found`, then `revoked`, `offline`; null platform is `unavailable`.
   */
  async target(
    organizationId: string,
    nodeId: string,
  ): Promise<{ ok: true; target: CommandTarget } | { ok: false; code: string; error: string }> {
    const rows = await this.db.$queryRaw<TargetRow[]>(Prisma.sql`
      SELECT n.id, n.name, n.status::text AS status, (n.status = 'revoked' OR n.revoked_at IS NOT NULL) AS revoked,
             n.last_seen_at, o.wire_id AS org, n.wire_id AS wid, n.subject_site
      FROM node n JOIN organization o ON o.id = n.organization_id
      WHERE n.organization_id = ${organizationId}::uuid AND n.id = ${nodeId}::uuid`);
    const row = rows[0];
    if (!row) return { ok: false, code: "not_found", error: `node ${nodeId} not found` };
    if (row.revoked) return { ok: false, code: "revoked", error: `node ${row.name} is revoked` };
    if (row.status !== "online") {
      const seen = row.last_seen_at ? `; last seen ${row.last_seen_at.toISOString()}` : "";
      return {
        ok: false,
        code: "offline",
        error: `node ${row.name} is ${row.status}${seen}: it cannot take this now`,
      };
    }
    if (!this.platform)
      return { ok: false, code: "unavailable", error: "the gateway is not connected to NATS yet" };
    return {
      ok: true,
      target: { nodeId, name: row.name, ...downlinkTarget(row) },
    };
  }

  /** A fresh request id of this replica. */
  nextId(): string {
    return `${this.prefix}-${(this.sequence++).toString(36)}`;
  }

  /** Publishes one CommandRequest on a node's downlink; false when it could not be sent. */
  send(target: DownlinkTarget, request: Omit<CommandRequest, "v">): boolean {
    const platform = this.platform;
    if (!platform) return false;
    try {
      platform.publish(
        this.downlinks.subject(target),
        encodeMessage("commandRequest", { v: PROTOCOL_VERSION, ...request }),
      );
      return true;
    } catch (error) {
      this.logger.warn({ error: error instanceof Error ? error.message : String(error) }, "cannot publish");
      return false;
    }
  }

  /**
   * Listens for every reply to `id` from that node (a log session's parts) until `close`;
   * an invalid reply from the node ends it (`onFailure`).
   */
  listen(
    id: string,
    target: DownlinkTarget,
    onReply: (reply: CommandReply) => void,
    onFailure: (code: string, error: string) => void,
  ): { close: () => void } {
    this.pending.set(id, {
      org: target.org,
      wid: target.wid,
      site: target.subjectSite,
      stream: onReply,
      finish: (outcome) => {
        this.pending.delete(id);
        if (!outcome.ok) onFailure(outcome.code, outcome.error);
      },
    });
    return { close: () => void this.pending.delete(id) };
  }

  /**
   * A throughput probe from one node to its leaf or the hub (docs/protocol.md, "Network probes"),
   * within the probe limits; the node's chunks on `ef.up.<wid>.prb` are acknowledged here while
   * the probe is pending. Waits for the probe's time bound plus `slackMs`.
   */
  async probe(input: {
    organizationId: string;
    nodeId: string;
    to: ProbeTarget;
    bytes: number;
    ms: number;
    slackMs?: number;
  }): Promise<CommandOutcome> {
    const started = Date.now();
    const fail = (code: string, error: string): CommandOutcome => ({
      nodeId: input.nodeId,
      ok: false,
      ms: Date.now() - started,
      code,
      error,
    });
    const found = await this.target(input.organizationId, input.nodeId);
    if (!found.ok) return fail(found.code, found.error);
    const { target } = found;
    const admission = this.probeLimits.admit(input.organizationId, input.nodeId);
    if (!admission.ok) return fail("busy", admission.why);
    try {
      const answer = await this.request(
        this.platform as NatsConnection,
        target,
        { cmd: "probe", to: input.to, by: input.bytes, ms: input.ms },
        input.ms + (input.slackMs ?? 5_000),
        true,
      );
      const result = answer.ok ? answer.reply : null;
      this.commands.inc({
        cmd: "probe",
        result: !answer.ok ? answer.code : result?.ok ? "ok" : (result?.err ?? "failed"),
      });
      if (!answer.ok)
        return fail(
          answer.code,
          answer.code === "timeout" ? `node ${target.name} ${answer.error}` : answer.error,
        );
      const { v: _v, id: _id, ok, err, why, ...rest } = answer.reply;
      if (!ok) return fail(err ?? "failed", why ?? `node ${target.name} refused the probe`);
      if (!rest.prb) return fail("bad_reply", `node ${target.name} answered the probe without a result`);
      return { nodeId: input.nodeId, ok: true, ms: Date.now() - started, result: rest };
    } finally {
      admission.release();
    }
  }

  /** A hub probe's chunk: acknowledged (empty reply) only for a probe pending for that node. */
  private onProbeChunk(msg: Msg): void {
    const from = parsePlatformUpSubject(msg.subject);
    if (from?.type !== "prb" || !msg.reply) return;
    const id = probeChunkId(msg.data);
    if (!id?.startsWith(`${this.prefix}-`)) return; // another replica's probe, or garbage
    const pending = this.pending.get(id);
    if (!pending?.probe || !sameNode(pending, from)) return;
    msg.respond(new Uint8Array(0));
  }

  private async runOne(
    input: CommandInput,
    nodeId: string,
    row: TargetRow | undefined,
  ): Promise<CommandOutcome> {
    const started = Date.now();
    const fail = (code: string, error: string): CommandOutcome => ({
      nodeId,
      ok: false,
      ms: Date.now() - started,
      code,
      error,
    });
    // Another organization's node answers exactly like a missing one.
    if (!row) return fail("not_found", `node ${nodeId} not found`);
    if (row.revoked) return fail("revoked", `node ${row.name} is revoked`);
    if (row.status !== "online") {
      const seen = row.last_seen_at ? `; last seen ${row.last_seen_at.toISOString()}` : "";
      return fail("offline", `node ${row.name} is ${row.status}${seen}: it cannot take commands now`);
    }
    const platform = this.platform;
    if (!platform) return fail("unavailable", "the gateway is not connected to NATS yet");
    const admission = this.limits.admit(input.organizationId, nodeId);
    if (!admission.ok) return fail("busy", admission.why);
    try {
      const answer = await this.request(
        platform,
        downlinkTarget(row),
        { cmd: input.cmd, ...(input.app !== undefined ? { app: input.app } : {}) },
        input.timeoutMs,
      );
      if (!answer.ok)
        return fail(
          answer.code,
          answer.code === "timeout" ? `node ${row.name} ${answer.error}` : answer.error,
        );
      const { v: _v, id: _id, ok, err, why, ...result } = answer.reply;
      if (!ok) return fail(err ?? "failed", why ?? `node ${row.name} refused the command`);
      return { nodeId, ok: true, ms: Date.now() - started, result };
    } finally {
      admission.release();
    }
  }

  private request(
    platform: NatsConnection,
    target: DownlinkTarget,
    request: Omit<CommandRequest, "v" | "id">,
    timeoutMs: number,
    probe = false,
  ): Promise<{ ok: true; reply: CommandReply } | { ok: false; code: string; error: string }> {
    const id = this.nextId();
    return new Promise((resolve) => {
      const timer = setTimeout(
        () =>
          finish({
            ok: false,
            code: "timeout",
            error: `did not answer within ${Math.round(timeoutMs / 100) / 10} s`,
          }),
        timeoutMs,
      );
      const finish: Pending["finish"] = (outcome) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        resolve(outcome);
      };
      this.pending.set(id, {
        org: target.org,
        wid: target.wid,
        site: target.subjectSite,
        finish,
        ...(probe ? { probe } : {}),
      });
      try {
        platform.publish(
          this.downlinks.subject(target),
          encodeMessage("commandRequest", { v: PROTOCOL_VERSION, id, ...request }),
        );
      } catch (error) {
        finish({
          ok: false,
          code: "unavailable",
          error: `cannot publish: ${error instanceof Error ? error.message : String(error)}`,
        });
      }
    });
  }

  private onReply(msg: Msg): void {
    const from = parsePlatformUpSubject(msg.subject);
    if (from?.type !== "cmd") {
      this.replies.inc({ result: "bad_subject" });
      return;
    }
    const decoded = decodeMessage("commandReply", msg.data);
    if (!decoded.ok) {
      // Which request it answers cannot be read: the node's pending commands here fail now
      // (instead of at their timeout), with what was wrong. Oversized payloads are not decoded.
      const detail =
        decoded.reason === "too_large"
          ? `${msg.data.byteLength} bytes, more than the ${MESSAGE_SIZE_LIMITS.commandReply}-byte limit`
          : `${decoded.reason}: ${decoded.detail}`;
      let failed = 0;
      for (const pending of [...this.pending.values()]) {
        if (!sameNode(pending, from)) continue;
        failed++;
        pending.finish({
          ok: false,
          code: "bad_reply",
          error: `the node answered with an invalid reply (${detail})`,
        });
      }
      if (failed > 0) this.replies.inc({ result: "bad_reply" });
      this.logger.warn(
        { subject: msg.subject, reason: decoded.reason, detail: decoded.detail },
        "invalid command reply",
      );
      return;
    }
    const reply = decoded.msg;
    if (!reply.id.startsWith(`${this.prefix}-`)) return; // another replica's request
    const pending = this.pending.get(reply.id);
    if (!pending || !sameNode(pending, from)) {
      // After its timeout, or a node answering a request that was not sent to it.
      this.replies.inc({ result: "late" });
      return;
    }
    this.replies.inc({ result: "matched" });
    if (pending.stream) pending.stream(reply);
    else pending.finish({ ok: true, reply });
  }
}

function downlinkTarget(row: TargetRow): DownlinkTarget {
  return {
    org: formatWireId(BigInt(row.org)),
    wid: formatWireId(BigInt(row.wid)),
    subjectSite: row.subject_site,
  };
}

/** Whether a reply's subject names the node (and the site) a request went to. */
function sameNode(pending: Pick<Pending, "org" | "wid" | "site">, from: PlatformUpSubject): boolean {
  return pending.org === from.org && pending.wid === from.wid && pending.site === from.site;
}
