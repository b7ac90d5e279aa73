/** Progress on the terminal: one rewritten line on a TTY, a line every few seconds otherwise. */

export function renderBar(done: number, total: number, width = 30): string {
  const ratio = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
  const filled = Math.round(ratio * width);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}%`;
}

export class Progress {
  private readonly started = Date.now();
  private lastPlainLine = 0;
  private readonly tty = Boolean(process.stdout.isTTY);

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {}

  update(done: number, detail = ""): void {
    const seconds = ((Date.now() - this.started) / 1000).toFixed(0);
    const line = `  ${this.label.padEnd(10)} ${renderBar(done, this.total)} ${done}/${this.total}  ${seconds}s  ${detail}`;
    if (this.tty) {
      process.stdout.write(`\r\x1b[2K${line}`);
    } else if (Date.now() - this.lastPlainLine >= 5_000) {
      this.lastPlainLine = Date.now();
      process.stdout.write(`${line}\n`);
    }
  }

  finish(summary: string): void {
    if (this.tty) process.stdout.write("\r\x1b[2K");
    process.stdout.write(`  ✓ ${this.label}: ${summary}\n`);
  }
}

export function step(text: string): void {
  process.stdout.write(`==> ${text}\n`);
}
