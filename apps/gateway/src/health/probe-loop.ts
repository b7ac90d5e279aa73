import type { Logger } from "../logger.js";
import type { DependencyHealth, DependencyName } from "./dependency-health.js";

/** A check that resolves when the dependency is usable and rejects with the reason otherwise. */
export type Probe = (signal: AbortSignal) => Promise<Record<string, unknown> | undefined>;

export interface ProbeLoopOptions {
  dependency: DependencyName;
  probe: Probe;
  health: DependencyHealth;
  logger: Logger;
  /** Pause between checks while the dependency is up. */
  intervalMs: number;
  /** A check that takes longer than this counts as a failure (a hung server is a down server). */
  timeoutMs?: number;
}

const FIRST_RETRY_DELAY_MS = 250;
// Recovery is noticed within this long even when the healthy interval is much longer.
const MAX_RETRY_DELAY_MS = 10_000;
const DEFAULT_PROBE_TIMEOUT_MS = 3_000;

/**
 * Runs one dependency's health check forever: every interval while up, with exponential
 * backoff (and jitter, so a fleet of gateways does not retry in lockstep) while down. Startup is
 * just the first iterations of the same loop, so "waiting for X" and "lost X" share one code path.
 */
export class ProbeLoop {
  private readonly stopController = new AbortController();
  private wake: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private consecutiveFailures = 0;

  constructor(private readonly options: ProbeLoopOptions) {}

  start(): void {
    this.running ??= this.run();
  }

  /** Checks again now instead of waiting out the current delay (e.g. after a NATS reconnect). */
  checkNow(): void {
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    this.wake?.();
    await this.running;
  }

  private async run(): Promise<void> {
    const { dependency, health, logger } = this.options;
    while (!this.stopController.signal.aborted) {
      const started = Date.now();
      try {
        const details = await this.probeOnce();
        if (this.stopController.signal.aborted) return;
        this.consecutiveFailures = 0;
        health.markUp(dependency, { checkMs: Date.now() - started, ...details });
        await this.sleep(this.options.intervalMs);
      } catch (error) {
        if (this.stopController.signal.aborted) return;
        this.consecutiveFailures += 1;
        const reason = describeError(error);
        health.markDown(dependency, reason);
        const delayMs = this.retryDelayMs();
        logger.warn(
          { dependency, attempt: this.consecutiveFailures, retryInMs: delayMs, reason },
          `waiting for ${dependency}`,
        );
        await this.sleep(delayMs);
      }
    }
  }

  private async probeOnce(): Promise<Record<string, unknown> | undefined> {
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
    const signal = AbortSignal.any([this.stopController.signal, AbortSignal.timeout(timeoutMs)]);
    // Race rather than trust the probe to honour the signal: some clients (Prisma) take no signal.
    return await new Promise((resolve, reject) => {
      const onAbort = () => reject(new Error(`health check timed out after ${timeoutMs} ms`));
      signal.addEventListener("abort", onAbort, { once: true });
      this.options.probe(signal).then(resolve, reject);
    });
  }

  private retryDelayMs(): number {
    const exponential = FIRST_RETRY_DELAY_MS * 2 ** Math.min(this.consecutiveFailures - 1, 10);
    const capped = Math.min(exponential, MAX_RETRY_DELAY_MS, Math.max(this.options.intervalMs, 250));
    return Math.round(capped * (0.8 + Math.random() * 0.4));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}

/** One line per failure: Prisma's multi-line messages would otherwise break up the readyz JSON and logs. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // AggregateError (e.g. ECONNREFUSED on both ::1 and 127.0.0.1) hides the useful part in .errors.
  if (error instanceof AggregateError && error.errors.length > 0 && !error.message) {
    return error.errors.map(describeError).join("; ");
  }
  const message = (error.message || error.name).replace(/\s+/g, " ").trim();
  const code = (error as { code?: unknown }).code;
  const codeSuffix = typeof code === "string" && !message.includes(code) ? ` [${code}]` : "";
  const cause = error.cause ? ` (cause: ${describeError(error.cause)})` : "";
  return `${message}${codeSuffix}${cause}`;
}
