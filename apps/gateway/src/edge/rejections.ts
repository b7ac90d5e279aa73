import type { Logger } from "../logger.js";
import type { EdgeMetrics } from "./edge-metrics.js";

/** Why an edge message was refused (the `reason` label; a closed set keeps the label cheap). */
export type RejectReason =
  | "bad_subject"
  | "unknown_node"
  | "revoked"
  // The subject's site is not the node's (issue 8 #2): another site's leaf, or reports sent on the
  // site a node was moved away from.
  | "wrong_site"
  | "too_large"
  | "not_msgpack"
  | "unknown_version"
  | "invalid"
  | "duplicate"
  | "out_of_order"
  // A metrics report older than the node's window (metrics-window.ts): whether it was written is unknown.
  | "too_old"
  | "revision_ahead"
  | "mimir_rejected"
  // Metrics naming apps the node is not desired to run, or interfaces past its budget.
  | "series_budget"
  // An app or interface a metrics report names twice: the first is written, the rest would be a
  // second sample of one series at one timestamp (Mimir refuses the whole write for it).
  | "repeated_name"
  // Schema-valid, yet the database can never store it (a data exception): terminated, not retried.
  | "unstorable";

const LOG_INTERVAL_MS = 1_000;

/**
 * Counts every rejection and logs it with its reason, at most once a second per (type, reason)
 * with the number suppressed since: a misbehaving fleet must not turn into a log flood.
 */
export class Rejections {
  private readonly lastLogged = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
  ) {}

  reject(type: string, reason: RejectReason, detail: string, subject?: string): void {
    this.metrics.rejected.inc({ type, reason });
    const key = `${type}/${reason}`;
    const now = Date.now();
    const last = this.lastLogged.get(key);
    if (last && now - last.at < LOG_INTERVAL_MS) {
      last.suppressed += 1;
      return;
    }
    this.lastLogged.set(key, { at: now, suppressed: 0 });
    this.logger.warn(
      { type, reason, detail, subject, suppressedSinceLastLog: last?.suppressed ?? 0 },
      "edge message rejected",
    );
  }
}
