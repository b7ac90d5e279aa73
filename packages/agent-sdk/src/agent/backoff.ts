export interface BackoffPolicy {
  /** Ceiling of the first retry's delay. */
  baseMs: number;
  /** Ceiling of every delay. */
  maxMs: number;
}

/**
 * "Full jitter" exponential backoff: a uniformly random delay in [0, min(max, base·2^attempt)).
 * Spreads a fleet's reconnect storm over the whole window instead of synchronized waves.
 */
export function fullJitterDelay(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}

/**
 * Reconnect delay for the NATS client's `reconnectDelayHandler`. The client asks for the delay
 * several times per attempt, so the delay is drawn once per attempt (`nextAttempt`, on each
 * "reconnecting" status) and returned unchanged until the next one; `reset` on reconnect.
 */
export class ReconnectBackoff {
  private attempt = 0;
  private current: number | undefined;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly random: () => number = Math.random,
  ) {}

  readonly delay = (): number => {
    this.current ??= fullJitterDelay(this.attempt, this.policy, this.random);
    return this.current;
  };

  nextAttempt(): void {
    this.attempt++;
    this.current = undefined;
  }

  reset(): void {
    this.attempt = 0;
    this.current = undefined;
  }
}
