import { APP_LOG_RING_BYTES, LOG_MAX_LINE_BYTES } from "../protocol/commands.js";

/** One line of an app's output, numbered so a reader can tell what it missed. */
export interface LogLine {
  seq: number;
  text: string;
  /** UTF-8 bytes of `text` (what a session's credit and budget count). */
  bytes: number;
}

/**
 * An app's recent output (stdout and stderr together, as in its output log) as a ring of lines
 * bounded in bytes: what a live log session starts from and follows. Lines are sanitized here,
 * once: control characters other than tab dropped, a binary line replaced by a note, an enormous
 * one cut to LOG_MAX_LINE_BYTES saying how much was dropped. A line still unterminated past the
 * limit is emitted cut (memory stays bounded whatever the app writes).
 */
export class AppLog {
  private readonly lines: LogLine[] = [];
  private head = 0;
  private bytes = 0;
  private nextSeq = 1;
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private readonly listeners = new Set<(line: LogLine) => void>();

  constructor(private readonly capacityBytes = APP_LOG_RING_BYTES) {}

  /** Raw output as it arrives (any chunking). */
  write(chunk: Uint8Array): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) break;
      this.partial.push(Buffer.from(chunk.subarray(start, newline)));
      this.flushPartial();
      start = newline + 1;
    }
    if (start < chunk.byteLength) {
      const rest = Buffer.from(chunk.subarray(start));
      // Keep at most a little past the limit of an unterminated line: the rest is only counted.
      if (this.partialBytes <= LOG_MAX_LINE_BYTES * 2) this.partial.push(rest);
      this.partialBytes += rest.byteLength;
      if (this.partialBytes > LOG_MAX_LINE_BYTES * 64) this.flushPartial();
    }
  }

  /** A line the agent itself adds (a hollow app's output, a note). */
  append(text: string): void {
    this.push(sanitizeLogLine(Buffer.from(text, "utf8")));
  }

  /** The last `count` lines, oldest first. */
  tail(count: number): LogLine[] {
    const live = this.lines.length - this.head;
    return this.lines.slice(this.head + Math.max(0, live - count));
  }

  /** Every new line, as it completes; returns the unsubscribe function. */
  subscribe(listener: (line: LogLine) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stats(): { lines: number; bytes: number } {
    return { lines: this.lines.length - this.head, bytes: this.bytes };
  }

  private flushPartial(): void {
    const whole = Buffer.concat(this.partial);
    const dropped = this.partialBytes > whole.byteLength ? this.partialBytes - whole.byteLength : 0;
    this.partial = [];
    this.partialBytes = 0;
    this.push(sanitizeLogLine(whole, dropped));
  }

  private push(text: string): void {
    const line: LogLine = { seq: this.nextSeq++, text, bytes: Buffer.byteLength(text, "utf8") };
    this.lines.push(line);
    this.bytes += line.bytes;
    while (this.bytes > this.capacityBytes && this.head < this.lines.length - 1) {
      this.bytes -= (this.lines[this.head] as LogLine).bytes;
      this.head++;
    }
    // Compact now and then instead of shifting on every line.
    if (this.head > 1024 && this.head * 2 > this.lines.length) {
      this.lines.splice(0, this.head);
      this.head = 0;
    }
    for (const listener of this.listeners) {
      try {
        listener(line);
      } catch {
        // A session's bug must not stop the app's output from being read.
      }
    }
  }
}

/**
 * One line of output made safe to show and send: invalid UTF-8 becomes U+FFFD, a trailing CR and
 * control characters (but tab) go, a line that is mostly binary becomes a note of its size, and a
 * line over LOG_MAX_LINE_BYTES is cut with a note of what was dropped.
 */
export function sanitizeLogLine(raw: Buffer, alreadyDropped = 0): string {
  let bytes = raw;
  if (bytes.byteLength > 0 && bytes[bytes.byteLength - 1] === 0x0d) bytes = bytes.subarray(0, -1);
  const sample = bytes.subarray(0, 512);
  let binary = 0;
  for (const byte of sample) if ((byte < 0x20 && byte !== 0x09 && byte !== 0x1b) || byte === 0x7f) binary++;
  if (sample.byteLength > 0 && binary * 10 > sample.byteLength) {
    return `[binary output: ${bytes.byteLength + alreadyDropped} bytes not shown]`;
  }
  let text = bytes
    .toString("utf8")
    // ANSI escape sequences (colours), then the remaining control characters.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character is what is matched
    .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, "")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
    .replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, "");
  let dropped = alreadyDropped;
  if (Buffer.byteLength(text, "utf8") > LOG_MAX_LINE_BYTES) {
    const cut = Buffer.from(text, "utf8")
      .subarray(0, LOG_MAX_LINE_BYTES)
      .toString("utf8")
      .replace(/\uFFFD$/, "");
    dropped += Buffer.byteLength(text, "utf8") - Buffer.byteLength(cut, "utf8");
    text = cut;
  }
  return dropped > 0 ? `${text} …[${dropped} bytes cut]` : text;
}
