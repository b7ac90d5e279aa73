/**
 * Liveness timing, derived from the heartbeat interval the agents are told (HelloReply.hb).
 *
 * - offlineAfterMs = 3 heartbeat intervals + slack: a live node may lose one heartbeat (a hub
 *   restart or a leaf re-linking drops core-NATS messages in flight) and stay online; a node
 *   missing three goes offline.
 * - refreshAfterMs = interval + slack/2: a heartbeat rewrites `last_seen_at` only when the stored
 *   value is at least this old (or the status changes), so a node with a 30 s heartbeat is
 *   written every other heartbeat, not on each one. It is chosen so the stored value is never
 *   older than offlineAfterMs while at most one heartbeat in a row is lost: staleness <
 *   refreshAfter + 2 intervals + flush < offlineAfter (slack/2 > flush, as slack >= 4 flushes),
 *   i.e. a live node is never swept. With one written heartbeat in two and none lost tolerated,
 *   a hub restart used to sweep live nodes (9 of 400 in bench:scale).
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
  const offlineAfterMs = 3 * heartbeatIntervalMs + slackMs;
  const refreshAfterMs = Math.max(flushIntervalMs, offlineAfterMs - 2 * heartbeatIntervalMs - slackMs / 2);
  const sweepIntervalMs = Math.max(flushIntervalMs, Math.min(5_000, Math.round(heartbeatIntervalMs / 2)));
  return { heartbeatIntervalMs, flushIntervalMs, slackMs, offlineAfterMs, refreshAfterMs, sweepIntervalMs };
}
