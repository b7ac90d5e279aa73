/**
 * Liveness timing, derived from the heartbeat interval the agents are told (HelloReply.hb).
 *
 * - offlineAfterMs = 2 heartbeat intervals + slack: a node missing two heartbeats goes offline.
 * - refreshAfterMs: a heartbeat rewrites `last_seen_at` only when the stored value is at least
 *   this old (or the status changes), so a node with a 30 s heartbeat is written every other
 *   heartbeat, not on each one. It is chosen so the stored value is never older than
 *   offlineAfterMs while heartbeats flow: staleness < refreshAfter + interval + flush <
 *   offlineAfter, i.e. a live node is never swept.
 */
export interface LivenessTiming {
  heartbeatIntervalMs: number;
  flushIntervalMs: number;
  slackMs: number;
  offlineAfterMs: number;
  refreshAfterMs: number;
  sweepIntervalMs: number;
}

export function livenessTiming(heartbeatIntervalMs: number, flushIntervalMs: number): LivenessTiming {
  const slackMs = Math.max(4 * flushIntervalMs, Math.round(heartbeatIntervalMs / 3));
  const offlineAfterMs = 2 * heartbeatIntervalMs + slackMs;
  const refreshAfterMs = Math.max(flushIntervalMs, offlineAfterMs - heartbeatIntervalMs - slackMs / 2);
  const sweepIntervalMs = Math.max(flushIntervalMs, Math.min(5_000, Math.round(heartbeatIntervalMs / 2)));
  return { heartbeatIntervalMs, flushIntervalMs, slackMs, offlineAfterMs, refreshAfterMs, sweepIntervalMs };
}
