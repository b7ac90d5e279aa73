/**
 * Tenant fairness for the API (issue 8, #15): one organization's burst (a script hammering the
 * node list) must not push another organization's latency past its target. Two mechanisms, both
 * per process (each web replica enforces its own share; N replicas allow N times the rates):
 *
 * - **Rate limits** — a token bucket per API key and one per organization. Past it the call is
 *   refused with TOO_MANY_REQUESTS (HTTP 429) and the seconds after which a token is back
 *   (`Retry-After`).
 * - **Fair queuing** — at most `concurrency` calls run at once, and one organization at most
 *   `maxPerOrganization` of them; the rest wait in one FIFO queue per organization, and a freed
 *   slot goes to the next organization in round-robin order, not to whoever queued most. A queue
 *   is bounded: past `maxQueuePerOrg` waiting calls, the organization's next call is refused with
 *   429 as well.
 *
 * Why slots near the cores and a cap per organization: a node-list call at 100,000 nodes is CPU
 * and database work, not waiting. Measured with 16 slots on 2 cores, another organization's
 * burst held all 16, and a victim's call, once admitted, ran beside 15 of them (p99 7.6 s). With
 * a cap, slots are always left for the others, and each admitted call gets a fair part of the CPU.
 *
 * Pure bookkeeping with an injectable clock; the tRPC middleware in trpc.ts is its only user.
 */

export interface FairShareOptions {
  /** Calls running at once in this process. */
  concurrency: number;
  /** Calls one organization may run at once (≤ concurrency); defaults to half the slots. */
  maxPerOrganization?: number;
  /** Calls one organization may have waiting; past it, 429. */
  maxQueuePerOrg: number;
  organization: { ratePerSecond: number; burst: number };
  apiKey: { ratePerSecond: number; burst: number };
  now?: () => number;
}

/** Slots sized to the machine: two per core (a call also waits on the database), at least 4. */
export function defaultConcurrency(cores: number): number {
  return Math.max(4, 2 * cores);
}

/** Half the slots, at least one: an organization's burst always leaves the other half free. */
export function defaultMaxPerOrganization(concurrency: number): number {
  return Math.max(1, Math.ceil(concurrency / 2));
}

export const DEFAULT_FAIR_SHARE: FairShareOptions = {
  concurrency: 4,
  maxQueuePerOrg: 256,
  organization: { ratePerSecond: 200, burst: 400 },
  apiKey: { ratePerSecond: 50, burst: 100 },
};

/** Why a call was refused, and when to try again. */
export class RateLimited extends Error {
  override name = "RateLimited";
  constructor(
    readonly scope: "apiKey" | "organization" | "queue",
    readonly retryAfterSeconds: number,
  ) {
    super(
      scope === "queue"
        ? `too many requests of this organization are waiting; retry in ${retryAfterSeconds} s`
        : `rate limit of this ${scope === "apiKey" ? "API key" : "organization"} reached; retry in ${retryAfterSeconds} s`,
    );
  }
}

class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.updatedAt = now;
  }

  /** Takes a token, or says in how many seconds one is back. */
  take(now: number): { ok: true } | { ok: false; retryAfterSeconds: number } {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.updatedAt) / 1000) * this.ratePerSecond);
    this.updatedAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - this.tokens) / this.ratePerSecond)) };
  }

  full(now: number): boolean {
    return this.tokens + ((now - this.updatedAt) / 1000) * this.ratePerSecond >= this.burst;
  }
}

interface Waiter {
  resolve: (release: () => void) => void;
}

export class FairShare {
  private running = 0;
  private readonly runningByOrganization = new Map<string, number>();
  private readonly maxPerOrganization: number;
  private readonly queues = new Map<string, Waiter[]>();
  /** Organizations with waiting calls, in the order their turn comes. */
  private readonly turns: string[] = [];
  private readonly organizationBuckets = new Map<string, TokenBucket>();
  private readonly keyBuckets = new Map<string, TokenBucket>();
  private readonly now: () => number;

  constructor(private readonly options: FairShareOptions = DEFAULT_FAIR_SHARE) {
    this.now = options.now ?? Date.now;
    this.maxPerOrganization = Math.min(
      options.concurrency,
      options.maxPerOrganization ?? defaultMaxPerOrganization(options.concurrency),
    );
  }

  /**
   * Admits one call of `organizationId` (made with API key `apiKeyId`, if any). Resolves with the
   * function that ends it once a slot is free; throws RateLimited when over a limit.
   */
  async admit(organizationId: string, apiKeyId: string | null): Promise<() => void> {
    const now = this.now();
    if (apiKeyId) {
      const taken = this.bucket(this.keyBuckets, apiKeyId, this.options.apiKey, now).take(now);
      if (!taken.ok) throw new RateLimited("apiKey", taken.retryAfterSeconds);
    }
    const taken = this.bucket(this.organizationBuckets, organizationId, this.options.organization, now).take(
      now,
    );
    if (!taken.ok) throw new RateLimited("organization", taken.retryAfterSeconds);

    const queue = this.queues.get(organizationId) ?? [];
    if (queue.length >= this.options.maxQueuePerOrg) throw new RateLimited("queue", 1);
    // Every call queues, and dispatch() starts it at once when a slot is free and the organization
    // is under its cap: one path, so no call can overtake another organization's turn.
    const admitted = new Promise<() => void>((resolve) => {
      queue.push({ resolve });
      if (!this.queues.has(organizationId)) {
        this.queues.set(organizationId, queue);
        this.turns.push(organizationId);
      }
    });
    this.dispatch();
    return admitted;
  }

  /** Calls running now, and waiting per organization (for metrics and tests). */
  stats(): {
    running: number;
    runningByOrganization: Record<string, number>;
    waiting: Record<string, number>;
  } {
    return {
      running: this.running,
      runningByOrganization: Object.fromEntries(this.runningByOrganization),
      waiting: Object.fromEntries(
        [...this.queues].map(([organization, queue]) => [organization, queue.length]),
      ),
    };
  }

  private releaser(organizationId: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      const held = (this.runningByOrganization.get(organizationId) ?? 1) - 1;
      if (held > 0) this.runningByOrganization.set(organizationId, held);
      else this.runningByOrganization.delete(organizationId);
      this.dispatch();
    };
  }

  /**
   * Hands free slots to waiting calls, one organization after the other, passing over an
   * organization at its cap (it keeps its place in the turns). Stops when no slot is free or every
   * waiting organization is at its cap.
   */
  private dispatch(): void {
    let passedOver = 0;
    while (this.running < this.options.concurrency && passedOver < this.turns.length) {
      const organizationId = this.turns.shift() as string;
      const queue = this.queues.get(organizationId);
      const waiter = queue?.shift();
      if (!queue || !waiter) {
        this.queues.delete(organizationId);
        continue;
      }
      const held = this.runningByOrganization.get(organizationId) ?? 0;
      if (held >= this.maxPerOrganization) {
        queue.unshift(waiter);
        this.turns.push(organizationId);
        passedOver++;
        continue;
      }
      passedOver = 0;
      if (queue.length > 0) this.turns.push(organizationId);
      else this.queues.delete(organizationId);
      this.running++;
      this.runningByOrganization.set(organizationId, held + 1);
      waiter.resolve(this.releaser(organizationId));
    }
    this.forgetIdleBuckets();
  }

  /** Buckets that are full again hold no information: dropped, so memory follows active callers. */
  private forgetIdleBuckets(): void {
    if (this.keyBuckets.size + this.organizationBuckets.size < 10_000) return;
    const now = this.now();
    for (const buckets of [this.keyBuckets, this.organizationBuckets]) {
      for (const [id, bucket] of buckets) if (bucket.full(now)) buckets.delete(id);
    }
  }

  private bucket(
    buckets: Map<string, TokenBucket>,
    id: string,
    limits: { ratePerSecond: number; burst: number },
    now: number,
  ): TokenBucket {
    let bucket = buckets.get(id);
    if (!bucket) {
      bucket = new TokenBucket(limits.ratePerSecond, limits.burst, now);
      buckets.set(id, bucket);
    }
    return bucket;
  }
}
