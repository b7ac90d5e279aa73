/**
 * Which metrics reports of a node are already in Mimir: the highest sequence written (`high`) and a
 * bitmap of the 63 before it (bit i: sequence high − 1 − i was written). A report arriving after a
 * newer one (two gateway replicas sharing EF_UP, or a redelivery after a failure) is still written
 * once; a repeat is dropped; one older than the window is too old to tell and dropped too.
 * 63 bits, so the bitmap fits Postgres's signed bigint (node.metrics_seen). Pure.
 */

export const METRICS_WINDOW = 63;
const MASK = (1n << BigInt(METRICS_WINDOW)) - 1n;

export interface SeenWindow {
  high: number;
  seen: bigint;
}

export type WindowVerdict = "new" | "duplicate" | "too_old";

export function classify(window: SeenWindow, seq: number): WindowVerdict {
  if (seq > window.high) return "new";
  if (seq === window.high) return "duplicate";
  const bit = window.high - 1 - seq;
  if (bit >= METRICS_WINDOW) return "too_old";
  return (window.seen >> BigInt(bit)) & 1n ? "duplicate" : "new";
}

/** The window once `seqs` are written too (order does not matter: windows merge). */
export function withWritten(window: SeenWindow, seqs: readonly number[]): SeenWindow {
  const high = Math.max(window.high, ...seqs);
  const shift = high - window.high;
  let seen = shift >= METRICS_WINDOW ? 0n : window.seen << BigInt(shift);
  // The old high itself joins the bitmap when a newer one passes it.
  if (window.high > 0 && shift > 0 && shift - 1 < METRICS_WINDOW) seen |= 1n << BigInt(shift - 1);
  for (const seq of seqs) {
    const bit = high - 1 - seq;
    if (bit >= 0 && bit < METRICS_WINDOW) seen |= 1n << BigInt(bit);
  }
  return { high, seen: seen & MASK };
}
