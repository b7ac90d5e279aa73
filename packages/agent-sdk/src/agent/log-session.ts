import {
  type CommandReply,
  LOG_MAX_CREDIT_BYTES,
  LOG_PART_BYTES,
  LOG_SESSION_LEASE_MS,
  type LogEndReason,
  type LogPart,
  PROTOCOL_VERSION,
} from "../protocol/index.js";
import type { AppLog, LogLine } from "../runtime/app-log.js";

export interface LogSessionOptions {
  id: string;
  log: AppLog;
  /** Lines of history to start with. */
  tail: number;
  follow: boolean;
  /** Hard byte budget: bytes of lines, all parts together. */
  budget: number;
  /** Initial credit, bytes. */
  credit: number;
  /** Sends one reply (the agent's `ef.up.<site>.<wid>.cmd`). */
  send: (reply: CommandReply) => void;
  /** Called once, when the session ended (for whatever reason). */
  onEnd: (reason: LogEndReason) => void;
  /** Lines batch for this long before a part goes out (default 100 ms). */
  batchMs?: number;
  now?: () => number;
}

/** Lines a session holds for sending at most (beyond: the oldest are dropped and counted `lost`). */
const MAX_PENDING_BYTES = 4 * LOG_PART_BYTES;

/**
 * One live log session on the node (docs/protocol.md, "Live logs"): part 0 carries the history at
 * once; later parts carry new lines while the session holds credit, never more than its budget.
 * The gateway's credit messages pace it and keep it alive: heard from nobody for
 * LOG_SESSION_LEASE_MS, it ends itself (`lapsed`). Memory: at most MAX_PENDING_BYTES of lines
 * waiting for credit; older ones are dropped and counted.
 */
export class LogSession {
  readonly id: string;
  private pending: LogLine[] = [];
  private pendingBytes = 0;
  private credit: number;
  private sent = 0;
  private part = 0;
  private lost = 0;
  private lastHeard: number;
  private ended = false;
  private unsubscribe: (() => void) | undefined;
  private batchTimer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: LogSessionOptions) {
    this.id = options.id;
    this.credit = Math.min(options.credit, LOG_MAX_CREDIT_BYTES);
    this.now = options.now ?? Date.now;
    this.lastHeard = this.now();
  }

  /** Sends part 0 (the history that fits the credit now; the rest follows as credit comes). */
  start(): void {
    for (const line of this.options.log.tail(this.options.tail)) this.enqueue(line);
    if (this.options.follow) this.unsubscribe = this.options.log.subscribe((line) => this.onLine(line));
    const lines = this.take();
    const historyDone = !this.options.follow && this.pending.length === 0;
    this.sendPart(lines, historyDone ? "done" : undefined);
    if (!historyDone) this.checkBudget();
  }

  /** More credit (0: keepalive only). */
  grant(bytes: number): void {
    if (this.ended) return;
    this.lastHeard = this.now();
    this.credit = Math.min(LOG_MAX_CREDIT_BYTES, this.credit + bytes);
    this.pump();
  }

  /** Ends the session if its lease lapsed; true if it did. */
  checkLease(): boolean {
    if (this.ended) return true;
    if (this.now() - this.lastHeard < LOG_SESSION_LEASE_MS) return false;
    this.end("lapsed");
    return true;
  }

  end(reason: LogEndReason): void {
    if (this.ended) return;
    // The last part carries what may still go within the credit, and says why it ended.
    const lines = reason === "cancelled" || reason === "lapsed" ? [] : this.take();
    this.sendPart(lines, reason);
  }

  private onLine(line: LogLine): void {
    if (this.ended) return;
    this.enqueue(line);
    if (!this.batchTimer) {
      this.batchTimer = setTimeout(() => {
        this.batchTimer = undefined;
        this.pump();
      }, this.options.batchMs ?? 100);
      this.batchTimer.unref?.();
    }
  }

  private enqueue(line: LogLine): void {
    this.pending.push(line);
    this.pendingBytes += line.bytes;
    while (this.pendingBytes > MAX_PENDING_BYTES && this.pending.length > 1) {
      const dropped = this.pending.shift() as LogLine;
      this.pendingBytes -= dropped.bytes;
      this.lost++;
    }
  }

  private pump(): void {
    while (!this.ended && this.pending.length > 0) {
      if (this.checkBudget()) return;
      const lines = this.take();
      if (lines.length === 0) return; // no credit for the next line: wait for more
      const done = !this.options.follow && this.pending.length === 0;
      this.sendPart(lines, done ? "done" : undefined);
    }
  }

  /** Ends the session when the next line would not fit the budget; true if it ended. */
  private checkBudget(): boolean {
    const next = this.pending[0];
    if (!next || this.sent + next.bytes <= this.options.budget) return false;
    this.end("budget");
    return true;
  }

  /** Lines for one part: within the part size, the credit and the budget. */
  private take(): string[] {
    const lines: string[] = [];
    let bytes = 0;
    while (this.pending.length > 0) {
      const line = this.pending[0] as LogLine;
      if (bytes + line.bytes > LOG_PART_BYTES && lines.length > 0) break;
      if (line.bytes > this.credit) break;
      if (this.sent + line.bytes > this.options.budget) break;
      this.pending.shift();
      this.pendingBytes -= line.bytes;
      this.credit -= line.bytes;
      this.sent += line.bytes;
      bytes += line.bytes;
      lines.push(line.text);
    }
    return lines;
  }

  private sendPart(lines: string[], end: LogEndReason | undefined): void {
    const lg: LogPart = {
      p: this.part++,
      l: lines,
      ...(this.lost > 0 ? { lost: this.lost } : {}),
      ...(end ? { end } : {}),
    };
    this.lost = 0;
    if (end) this.finish();
    this.options.send({ v: PROTOCOL_VERSION, id: this.id, ok: true, lg });
    if (end) this.options.onEnd(end);
  }

  private finish(): void {
    this.ended = true;
    this.unsubscribe?.();
    clearTimeout(this.batchTimer);
    this.pending = [];
    this.pendingBytes = 0;
  }
}
