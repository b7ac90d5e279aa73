import { randomBytes } from "node:crypto";
import {
  type Command,
  type CommandReply,
  decodeMessage,
  encodeMessage,
  formatWireId,
  MESSAGE_SIZE_LIMITS,
  PROTOCOL_VERSION,
  parsePlatformUpSubject,
  platformDownSubject,
  platformUpWildcard,
} from "@edgefleet/agent-sdk/protocol";
import { type Db, Prisma } from "@edgefleet/db";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import { Counter, type Registry } from "prom-client";
import type { Logger } from "../../logger.js";
import { METRIC_PREFIX } from "../../metrics.js";
import type { EdgeService } from "../service.js";
import { CommandLimits, type CommandLimitsConfig, DEFAULT_COMMAND_LIMITS } from "./command-limits.js";

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
  finish: (outcome: { ok: true; reply: CommandReply } | { ok: false; code: string; error: string }) => void;
}

interface TargetRow {
  id: string;
  name: string;
  status: string;
  revoked: boolean;
  last_seen_at: Date | null;
  org: bigint;
  wid: bigint;
}

/**
 * Commands to nodes (docs/protocol.md, "Commands"): a CommandRequest published on the node's
 * downlink, its CommandReply heard on `ef.t.*.up.*.cmd`. Every replica hears every reply (no queue
 * group): the one whose request id it is resolves it; ids carry a per-process prefix, so a replica
 * ignores the others' replies without counting them. A reply counts only from the node the
 * request went to: the subject, which the server let through, must name that node.
 *
 * Never waits for a timeout it can predict: a node the inventory has offline, revoked or in
 * another organization is answered at once. A reply that is not a valid CommandReply (garbage, or
 * more than the 128 KiB limit, refused unread) fails that node's pending commands with `bad_reply`.
 */
export class NodeCommandService implements EdgeService {
  readonly name = "node-commands";
  private platform: NatsConnection | null = null;
  private subscription: Subscription | null = null;
  private readonly pending = new Map<string, Pending>();
  /** This process's request id prefix. */
  private readonly prefix = randomBytes(4).toString("hex");
  private sequence = 0;
  private readonly limits: CommandLimits;
  private readonly commands: Counter<"cmd" | "result">;
  private readonly replies: Counter<"result">;

  constructor(
    private readonly db: Db,
    registry: Registry,
    private readonly logger: Logger,
    limits: CommandLimitsConfig = DEFAULT_COMMAND_LIMITS,
  ) {
    this.limits = new CommandLimits(limits);
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
    this.subscription = platform.subscribe(platformUpWildcard("cmd"), {
      callback: (error, msg) => {
        if (!error) this.onReply(msg);
      },
    });
  }

  async stop(): Promise<void> {
    this.subscription?.unsubscribe();
    this.subscription = null;
    for (const pending of this.pending.values())
      pending.finish({ ok: false, code: "unavailable", error: "the gateway is shutting down" });
    this.platform = null;
  }

  /** Runs one command on each node (in parallel), each with its own outcome. */
  async run(input: CommandInput): Promise<CommandOutcome[]> {
    const ids = [...new Set(input.nodeIds)];
    const rows = await this.db.$queryRaw<TargetRow[]>(Prisma.sql`
      SELECT n.id, n.name, n.status::text AS status, (n.status = 'revoked' OR n.revoked_at IS NOT NULL) AS revoked,
             n.last_seen_at, o.wire_id AS org, n.wire_id AS wid
      FROM node n JOIN organization o ON o.id = n.organization_id
      WHERE n.organization_id = ${input.organizationId}::uuid AND n.id = ANY(${ids}::uuid[])`);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const outcomes = await Promise.all(ids.map((nodeId) => this.runOne(input, nodeId, byId.get(nodeId))));
    for (const outcome of outcomes)
      this.commands.inc({ cmd: input.cmd, result: outcome.ok ? "ok" : outcome.code });
    return outcomes;
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
      const org = formatWireId(BigInt(row.org));
      const wid = formatWireId(BigInt(row.wid));
      const answer = await this.request(platform, org, wid, input);
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
    org: string,
    wid: string,
    input: CommandInput,
  ): Promise<{ ok: true; reply: CommandReply } | { ok: false; code: string; error: string }> {
    const id = `${this.prefix}-${(this.sequence++).toString(36)}`;
    return new Promise((resolve) => {
      const timer = setTimeout(
        () =>
          finish({
            ok: false,
            code: "timeout",
            error: `did not answer within ${Math.round(input.timeoutMs / 100) / 10} s`,
          }),
        input.timeoutMs,
      );
      const finish: Pending["finish"] = (outcome) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        resolve(outcome);
      };
      this.pending.set(id, { org, wid, finish });
      try {
        platform.publish(
          platformDownSubject(org, wid),
          encodeMessage("commandRequest", {
            v: PROTOCOL_VERSION,
            id,
            cmd: input.cmd,
            ...(input.app !== undefined ? { app: input.app } : {}),
          }),
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
        if (pending.org !== from.org || pending.wid !== from.wid) continue;
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
    if (!pending || pending.org !== from.org || pending.wid !== from.wid) {
      // After its timeout, or a node answering a request that was not sent to it.
      this.replies.inc({ result: "late" });
      return;
    }
    this.replies.inc({ result: "matched" });
    pending.finish({ ok: true, reply });
  }
}
