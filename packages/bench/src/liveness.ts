/**
 * The gateway's liveness bound as the benchmarks check it: the same formula as
 * apps/gateway/src/edge/liveness/timing.ts (which the bench cannot import without the gateway's
 * env module). A node goes offline when not seen for 3 heartbeat intervals + slack (one lost
 * heartbeat is tolerated), marked by the next sweep: the documented bound is both.
 */

/** The gateway's GATEWAY_DISCONNECT_GRACE_MS default, for benchmarks that do not set it. */
export const GATEWAY_DEFAULT_DISCONNECT_GRACE_MS = 5_000;

/**
 * The bound for a node whose connection closed (the server's DISCONNECT event): the grace, at most
 * a quarter grace until the watcher's next check, and a second for its statement and the
 * notification (docs/node-status.md).
 */
export function disconnectBoundMs(graceMs = GATEWAY_DEFAULT_DISCONNECT_GRACE_MS): number {
  return graceMs * 1.25 + 1_000;
}

/** The gateway's GATEWAY_LIVENESS_FLUSH_MS default, for benchmarks that do not set it. */
export const GATEWAY_DEFAULT_LIVENESS_FLUSH_MS = 2_000;

export function livenessBound(
  heartbeatIntervalS: number,
  flushIntervalMs = GATEWAY_DEFAULT_LIVENESS_FLUSH_MS,
) {
  const heartbeatMs = heartbeatIntervalS * 1000;
  const slackMs = Math.max(4 * flushIntervalMs, Math.round(heartbeatMs / 3));
  const offlineAfterMs = 3 * heartbeatMs + slackMs;
  const sweepIntervalMs = Math.max(flushIntervalMs, Math.min(5_000, Math.round(heartbeatMs / 2)));
  return { offlineAfterMs, sweepIntervalMs, boundMs: offlineAfterMs + sweepIntervalMs };
}
