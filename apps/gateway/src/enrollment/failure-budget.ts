/**
 * A token bucket for failed enrollment attempts (issue 8, #12): anyone holding the public enroll
 * credentials can send requests, and each unknown token or bad proof costs a database lookup and
 * a log line. Every request takes a token before its lookup (so a concurrent burst cannot pass
 * before its failures are counted) and a successful one gives it back; while the bucket is empty,
 * requests are answered "ask again later" without any lookup. A real enrollment storm (thousands
 * of nodes with a valid token) returns what it takes, so it is not slowed by it.
 */
export class FailureBudget {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly capacity = 200,
    private readonly refillPerSecond = 20,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = capacity;
    this.updatedAt = now();
  }

  /** Takes one token for a request about to be looked up; false while the budget is spent. */
  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Gives a request's token back: it did not fail. */
  refund(): void {
    this.tokens = Math.min(this.capacity, this.tokens + 1);
  }

  /** Records a failure that took no token (a malformed request). */
  spend(): void {
    this.refill();
    this.tokens = Math.max(0, this.tokens - 1);
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(
      this.capacity,
      this.tokens + ((now - this.updatedAt) / 1000) * this.refillPerSecond,
    );
    this.updatedAt = now;
  }
}
