/**
 * Whether EF_UP consumption is moving, judged from what the gateway and the hub see. In the
 * 100,000-node attempt the hub missed the gateway's pings, the gateway reconnected, and 8 minutes
 * later the consumer held 341,415 messages with no pull waiting: either the gateway's own handlers
 * held the loop back (Postgres or Mimir slow: backpressure, by design) or the consume had stopped
 * asking for messages. Only the second is a fault, and only a fresh consume mends it.
 */
export interface IngestProgressFacts {
  /** Since the consume loop last received a message. */
  idleMs: number;
  /** Handlers running or queued: at the limit, the loop waits for room (backpressure). */
  handlersBusy: number;
  handlerLimit: number;
  /** The consumer as the hub sees it. */
  consumer: { numPending: number; numWaiting: number; numAckPending: number };
}

export type IngestProgress =
  | { verdict: "moving" }
  | { verdict: "held_back"; why: string }
  | { verdict: "stalled"; why: string };

/** Idle for this long with work waiting and no pull outstanding, and the loop free: a stuck consume. */
export const INGEST_STALL_MS = 60_000;

export function judgeIngestProgress(facts: IngestProgressFacts): IngestProgress {
  const { idleMs, handlersBusy, handlerLimit, consumer } = facts;
  if (idleMs < INGEST_STALL_MS || consumer.numPending === 0) return { verdict: "moving" };
  if (handlersBusy >= handlerLimit) {
    return { verdict: "held_back", why: `${handlersBusy} handlers busy: Postgres or Mimir is slow` };
  }
  if (consumer.numWaiting > 0) {
    // A pull is outstanding: the hub has not delivered on it (it is busy); nothing to mend here.
    return { verdict: "held_back", why: `${consumer.numWaiting} pull request(s) waiting at the hub` };
  }
  return {
    verdict: "stalled",
    why: `${consumer.numPending} messages waiting, no pull outstanding, ${handlersBusy}/${handlerLimit} handlers busy, idle ${Math.round(idleMs / 1000)} s`,
  };
}
