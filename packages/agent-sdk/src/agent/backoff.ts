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
    private readonly pacer?: ConnectPacer,
  ) {}

  readonly delay = (): number => {
    this.current ??= fullJitterDelay(this.attempt, this.policy, this.random);
    return this.current;
  };

  nextAttempt(): void {
    // A second attempt after a disconnect means the previous one failed.
    if (this.attempt > 0) this.pacer?.failed();
    this.attempt++;
    this.current = undefined;
  }

  reset(): void {
    if (this.attempt > 0) this.pacer?.succeeded();
    this.attempt = 0;
    this.current = undefined;
  }
}

/**
 * Spaces the connection attempts of many agents sharing one process (hollow fleets), through the
 * NATS client's `reconnectToServer` hook (the client redials a restarted server at once, before
 * any backoff). Without it a server restart makes thousands of agents of one process handshake
 * at once, the busy event loop answers the server late, and the server drops them all
 * ("Authentication Timeout"), again and again. Slots start `1000 / perSecond` ms apart; a failed
 * attempt widens the spacing by half (up to 200 ms), a successful one narrows it by 10 %: the
 * pace follows what the process manages. One agent per process (a real node) needs no pacer: its
 * backoff jitter spreads the fleet.
 */
export class ConnectPacer {
  private nextSlot = 0;
  private spacingMs: number;
  private readonly minSpacingMs: number;

  constructor(
    perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(perSecond > 0)) throw new Error(`perSecond must be positive, got ${perSecond}`);
    this.minSpacingMs = 1000 / perSecond;
    this.spacingMs = this.minSpacingMs;
  }

  /** Reserves the first free slot at least `minDelayMs` from now; returns the delay until it. */
  slotAfter(minDelayMs: number): number {
    const now = this.now();
    const slot = Math.max(now + minDelayMs, this.nextSlot);
    this.nextSlot = slot + this.spacingMs;
    return Math.round(slot - now);
  }

  failed(): void {
    this.spacingMs = Math.min(MAX_SPACING_MS, this.spacingMs * 1.5);
  }

  succeeded(): void {
    this.spacingMs = Math.max(this.minSpacingMs, this.spacingMs * 0.9);
  }

  /** Current spacing between attempts, ms. */
  spacing(): number {
    return this.spacingMs;
  }
}

const MAX_SPACING_MS = 200;
