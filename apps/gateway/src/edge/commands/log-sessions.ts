import {
  type CommandReply,
  LOG_MAX_BUDGET_BYTES,
  LOG_MAX_LINE_BYTES,
  LOG_MAX_TAIL_LINES,
  LOG_SESSION_LEASE_MS,
} from "@edgefleet/agent-sdk/protocol";
import { z } from "zod";
import type { Logger } from "../../logger.js";
import type { EdgeService } from "../service.js";
import type { CommandTarget, NodeCommandService } from "./node-command-service.js";

/** What the node may send before the viewer read it: the session's credit window, bytes. */
export const LOG_WINDOW_BYTES = 64 * 1024;
/** Default and largest byte budget the console asks for. */
export const DEFAULT_LOG_BUDGET_BYTES = 2 * 1024 * 1024;
/** A viewer that has not polled for this long left: the session is cancelled on the node. */
export const VIEWER_LEASE_MS = 15_000;
/** Keepalive credit (0 bytes) while nothing else went down, well inside the node's lease. */
export const KEEPALIVE_MS = Math.floor(LOG_SESSION_LEASE_MS / 3);
/** Credit goes down in grants of at least this much (or with the keepalive). */
const MIN_GRANT_BYTES = 8 * 1024;

export const openLogSessionRequest = z
  .object({
    nodeId: z.uuid(),
    app: z.string().min(1).max(128),
    tail: z.int().min(0).max(LOG_MAX_TAIL_LINES).default(200),
    follow: z.boolean().default(true),
    budgetBytes: z
      .int()
      .min(LOG_MAX_LINE_BYTES * 2)
      .max(LOG_MAX_BUDGET_BYTES)
      .default(DEFAULT_LOG_BUDGET_BYTES),
    timeoutMs: z.int().min(500).max(30_000).default(10_000),
  })
  .strict();
export type OpenLogSessionRequest = z.output<typeof openLogSessionRequest>;

/** What a viewer's poll gets: the lines it has not seen, and whether the session ended. */
export interface LogPoll {
  sessionId: string;
  nodeId: string;
  app: string;
  lines: string[];
  /** Lines the node dropped because the viewer read too slowly. */
  lost: number;
  /** Bytes of lines received so far, and the budget. */
  bytes: number;
  budgetBytes: number;
  ended: boolean;
  /** done, budget, cancelled, lapsed, app_gone, shutdown (the node's), or viewer_left, bad_reply. */
  endReason: string | null;
}

export type LogOpenOutcome = { ok: true; poll: LogPoll } | { ok: false; code: string; error: string };

interface Session {
  id: string;
  organizationId: string;
  target: CommandTarget;
  app: string;
  budget: number;
  unread: string[];
  unreadBytes: number;
  received: number;
  lost: number;
  /** Bytes the viewer read that have not been granted back to the node yet. */
  toGrant: number;
  ended: string | null;
  viewerAt: number;
  downAt: number;
  listener: { close: () => void };
  release: () => void;
  firstPart: (() => void) | null;
}

/**
 * Live log sessions (docs/protocol.md, "Live logs"), the gateway's half: opens a session on the
 * node, holds the lines the viewer has not read (at most the credit window: the node sends no more
 * than it was granted), grants credit back as the viewer reads, keeps the node's lease alive while
 * the viewer polls, and cancels the session when the viewer stops polling. Sessions live in this
 * replica (like the command limits); the console's API reaches one replica.
 */
export class LogSessionService implements EdgeService {
  readonly name = "log-sessions";
  private readonly sessions = new Map<string, Session>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly commands: NodeCommandService,
    private readonly logger: Logger,
    private readonly viewerLeaseMs = VIEWER_LEASE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  async start(): Promise<void> {
    this.sweeper = setInterval(() => this.sweep(), 1_000);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    for (const session of [...this.sessions.values()]) this.end(session, "shutdown", true);
    this.sessions.clear();
  }

  /** Opens a session and waits for its first part (the history) or a refusal. */
  async open(organizationId: string, input: OpenLogSessionRequest): Promise<LogOpenOutcome> {
    const found = await this.commands.target(organizationId, input.nodeId);
    if (!found.ok) return found;
    const admission = this.commands.logLimits.admit(organizationId, input.nodeId);
    if (!admission.ok) return { ok: false, code: "busy", error: admission.why };
    const id = this.commands.nextId();
    const now = this.now();
    let refusal: { code: string; error: string } | null = null;
    const session: Session = {
      id,
      organizationId,
      target: found.target,
      app: input.app,
      budget: input.budgetBytes,
      unread: [],
      unreadBytes: 0,
      received: 0,
      lost: 0,
      toGrant: 0,
      ended: null,
      viewerAt: now,
      downAt: now,
      listener: { close: () => undefined },
      release: admission.release,
      firstPart: null,
    };
    const first = new Promise<void>((resolve) => {
      session.firstPart = resolve;
    });
    session.listener = this.commands.listen(
      id,
      found.target,
      (reply) => {
        if (!reply.ok) refusal = { code: reply.err ?? "failed", error: reply.why ?? "the node refused" };
        this.onPart(session, reply);
      },
      (code, error) => {
        refusal = { code, error };
        this.end(session, code, false);
      },
    );
    this.sessions.set(id, session);
    const sent = this.commands.send(found.target, {
      id,
      cmd: "logs",
      app: input.app,
      n: input.tail,
      f: input.follow,
      bud: input.budgetBytes,
      cr: LOG_WINDOW_BYTES,
    });
    if (!sent) {
      this.end(session, "unavailable", false);
      this.sessions.delete(id);
      return { ok: false, code: "unavailable", error: "cannot publish to NATS" };
    }
    let answered = false;
    const timer = setTimeout(() => {
      const resolve = session.firstPart;
      resolve?.();
    }, input.timeoutMs);
    await first.then(() => {
      answered = session.firstPart === null;
    });
    clearTimeout(timer);
    if (refusal) {
      this.sessions.delete(id);
      return { ok: false, ...(refusal as { code: string; error: string }) };
    }
    if (!answered) {
      this.end(session, "timeout", true);
      this.sessions.delete(id);
      return {
        ok: false,
        code: "timeout",
        error: `node ${found.target.name} did not answer within ${Math.round(input.timeoutMs / 100) / 10} s`,
      };
    }
    this.logger.info({ session: id, nodeId: input.nodeId, app: input.app }, "log session opened");
    return { ok: true, poll: this.drain(session) };
  }

  /** The viewer's poll: its unread lines; also its heartbeat. null: no such session here. */
  poll(organizationId: string, sessionId: string): LogPoll | null {
    const session = this.sessions.get(sessionId);
    if (!session || session.organizationId !== organizationId) return null;
    session.viewerAt = this.now();
    const poll = this.drain(session);
    if (session.ended !== null) this.sessions.delete(sessionId);
    return poll;
  }

  /** The viewer left: cancel on the node. False when there is no such session here. */
  close(organizationId: string, sessionId: string): boolean {
    const session = this.sessions.get(sessionId);
    if (!session || session.organizationId !== organizationId) return false;
    this.end(session, "cancelled", true);
    this.sessions.delete(sessionId);
    return true;
  }

  /** Sessions open now (all organizations). */
  count(): number {
    return this.sessions.size;
  }

  private onPart(session: Session, reply: CommandReply): void {
    const settleFirst = () => {
      const first = session.firstPart;
      session.firstPart = null;
      first?.();
    };
    if (!reply.ok) {
      this.end(session, reply.err ?? "failed", false);
      settleFirst();
      return;
    }
    const part = reply.lg;
    if (!part) {
      this.end(session, "bad_reply", true);
      settleFirst();
      return;
    }
    for (const line of part.l) {
      const bytes = Buffer.byteLength(line, "utf8");
      session.received += bytes;
      session.unread.push(line);
      session.unreadBytes += bytes;
    }
    session.lost += part.lost ?? 0;
    // The node keeps its budget; a node that does not is cut off here (memory stays bounded).
    if (
      session.received > session.budget + LOG_MAX_LINE_BYTES * 2 ||
      session.unreadBytes > LOG_WINDOW_BYTES * 2
    ) {
      this.end(session, "budget", true);
    } else if (part.end) {
      this.end(session, part.end, false);
    }
    settleFirst();
  }

  private drain(session: Session): LogPoll {
    const lines = session.unread;
    session.unread = [];
    const read = session.unreadBytes;
    session.unreadBytes = 0;
    const lost = session.lost;
    session.lost = 0;
    if (session.ended === null) {
      session.toGrant += read;
      if (session.toGrant >= MIN_GRANT_BYTES) this.grant(session);
    }
    return {
      sessionId: session.id,
      nodeId: session.target.nodeId,
      app: session.app,
      lines,
      lost,
      bytes: session.received,
      budgetBytes: session.budget,
      ended: session.ended !== null,
      endReason: session.ended,
    };
  }

  private grant(session: Session): void {
    const cr = Math.min(session.toGrant, LOG_WINDOW_BYTES);
    session.toGrant -= cr;
    session.downAt = this.now();
    this.commands.send(session.target, { id: session.id, cmd: "credit", cr });
  }

  private end(session: Session, reason: string, tellNode: boolean): void {
    if (session.ended !== null) return;
    session.ended = reason;
    session.listener.close();
    session.release();
    if (tellNode) this.commands.send(session.target, { id: session.id, cmd: "cancel" });
    this.logger.info({ session: session.id, reason }, "log session ended");
  }

  /** Viewers that left are cancelled; live sessions get a keepalive; ended ones nobody polls go. */
  private sweep(): void {
    const now = this.now();
    for (const session of [...this.sessions.values()]) {
      if (now - session.viewerAt > this.viewerLeaseMs) {
        this.end(session, "viewer_left", true);
        this.sessions.delete(session.id);
      } else if (session.ended === null && now - session.downAt >= KEEPALIVE_MS) {
        this.grant(session);
      }
    }
  }
}
