import type { Logger } from "../logger.js";
import {
  type CommandReply,
  type CommandRequest,
  DIAG_MAX_LOG_LINE_CHARS,
  DIAG_MAX_LOG_LINES,
  type Diagnostics,
  encodeMessage,
  isAppCommand,
  MESSAGE_SIZE_LIMITS,
  PROTOCOL_VERSION,
} from "../protocol/index.js";
import type { Runtime } from "../runtime/runtime.js";

/** What answering a command needs from the agent around it. */
export interface CommandContext {
  runtime: Runtime;
  /** The bundle's parts (log included); `answerCommand` fits it into a reply. */
  diagnostics(): Promise<Diagnostics>;
  /** Queues a status and a metrics report now; their sequence numbers. */
  forceReport(): Promise<{ st: number; mx: number }>;
}

/** Runs one command and says how it went; never throws (a failure is a `failed` reply). */
export async function answerCommand(request: CommandRequest, context: CommandContext): Promise<CommandReply> {
  const base = { v: PROTOCOL_VERSION, id: request.id } as const;
  try {
    if (isAppCommand(request.cmd)) {
      const { runtime } = context;
      if (!runtime.operate) {
        return { ...base, ok: false, err: "unsupported", why: "this runtime does not take app commands" };
      }
      const result = await runtime.operate(request.app as string, request.cmd);
      return result.ok
        ? { ...base, ok: true, inst: result.inst, ...(result.hl ? { hl: result.hl } : {}) }
        : { ...base, ok: false, err: result.err, why: clip(result.why, 256) };
    }
    if (request.cmd === "diag") return { ...base, ok: true, diag: await context.diagnostics() };
    return { ...base, ok: true, rep: await context.forceReport() };
  } catch (error) {
    return { ...base, ok: false, err: "failed", why: clip(errorText(error), 256) };
  }
}

/**
 * Encodes a reply within the CommandReply limit: a diagnostics bundle loses its oldest log lines
 * until it fits (the bundle is bounded, whatever the log holds).
 */
export function encodeCommandReply(reply: CommandReply): Uint8Array {
  const limit = MESSAGE_SIZE_LIMITS.commandReply;
  let candidate = reply;
  for (;;) {
    try {
      return encodeMessage("commandReply", candidate);
    } catch (error) {
      const log = candidate.diag?.log;
      if (!candidate.diag || !log || log.length === 0) {
        return encodeMessage("commandReply", {
          v: PROTOCOL_VERSION,
          id: reply.id,
          ok: false,
          err: "failed",
          why: clip(`reply does not fit in ${limit} bytes: ${errorText(error)}`, 256),
        });
      }
      candidate = { ...candidate, diag: { ...candidate.diag, log: log.slice(Math.ceil(log.length / 4)) } };
    }
  }
}

/**
 * The agent's recent log lines for diagnostics bundles: a ring of the last lines, each clipped,
 * fed by a logger that also writes to the real one.
 */
export class RecentLog {
  private readonly lines: string[] = [];

  constructor(private readonly capacity = DIAG_MAX_LOG_LINES) {}

  /** A logger that records every line here and passes it on to `inner`. */
  tee(inner: Logger): Logger {
    const record = (level: string, message: string, fields?: Record<string, unknown>) => {
      const extra = fields ? ` ${safeJson(fields)}` : "";
      this.push(`${new Date().toISOString()} ${level} ${message}${extra}`);
    };
    return {
      info: (message, fields) => {
        record("info", message, fields);
        inner.info(message, fields);
      },
      warn: (message, fields) => {
        record("warn", message, fields);
        inner.warn(message, fields);
      },
      error: (message, fields) => {
        record("error", message, fields);
        inner.error(message, fields);
      },
    };
  }

  push(line: string): void {
    this.lines.push(clip(line.replaceAll("\u0000", ""), DIAG_MAX_LOG_LINE_CHARS));
    if (this.lines.length > this.capacity) this.lines.shift();
  }

  snapshot(): string[] {
    return [...this.lines];
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return "[unserializable]";
  }
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
