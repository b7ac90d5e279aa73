/**
 * A site's uplink use as a rollout's page shows it (issue 11, #4), from successive readings of the
 * hub's `/leafz` byte counters of the site leaf's connections: bytes carried, the rate over the
 * last interval, the peak rate over any one interval, and a short history for the chart. Pure: the
 * gateway's meter (apps/gateway/src/sites/uplink-meter.ts) reads the hub and stores
 * the result; the API turns the stored history into the chart's points.
 */

/** History points kept per site and rollout; when full, neighbouring pairs merge (longer spans). */
export const UPLINK_HISTORY_POINTS = 120;

/** Readings closer than this share of the interval to the last one wait for the next. */
const MIN_INTERVAL_SHARE = 0.75;

/** [end of the interval (ms, the hub's clock), bytes carried in it, its length in ms]. */
export type UplinkInterval = [end: number, bytes: number, ms: number];

export interface UplinkUse {
  /** The hub had the site's leaf link at the last reading. */
  linked: boolean;
  /** Bytes down the link (hub to site) since the first reading. */
  bytes: number;
  /** Over the last interval; null until there are two readings. */
  rateBps: number | null;
  /** Highest rate over one interval. */
  peakBps: number;
  readings: number;
  /** Down byte counter of each of the link's connections at the last reading, by connection id. */
  counters: Record<string, number>;
  /** The hub's time of the last reading (ms). */
  readAt: number;
  history: UplinkInterval[];
}

/**
 * One reading of a site's link: the down counters of its connections (a leaf has up to three:
 * its organization, the system account's updates, enrollment; all cross the uplink), at the hub's
 * time. `connections` null: the hub has no such link now.
 */
export interface LinkReading {
  at: number;
  connections: Record<string, number> | null;
}

/**
 * The use after one more reading. A connection that is new since the last reading counts whole
 * (it started after that reading: a reconnect resets the hub's counters); a reading closer than
 * three quarters of an interval to the last one is skipped (a late timer then a quick one: its
 * rate would be noise, one paced chunk more or less), so the peak is a rate over at least that
 * long. A link that is down carries nothing.
 */
export function nextUplinkUse(
  previous: UplinkUse | null,
  reading: LinkReading,
  intervalMs: number,
): UplinkUse {
  const connections = reading.connections ?? {};
  if (!previous) {
    return {
      linked: reading.connections !== null,
      bytes: 0,
      rateBps: null,
      peakBps: 0,
      readings: 1,
      counters: connections,
      readAt: reading.at,
      history: [],
    };
  }
  const ms = reading.at - previous.readAt;
  if (ms < intervalMs * MIN_INTERVAL_SHARE) return previous;
  let carried = 0;
  for (const [id, counter] of Object.entries(connections)) {
    const before = previous.counters[id];
    carried += before === undefined ? counter : Math.max(0, counter - before);
  }
  const rateBps = (carried * 1000) / ms;
  return {
    linked: reading.connections !== null,
    bytes: previous.bytes + carried,
    rateBps,
    peakBps: Math.max(previous.peakBps, rateBps),
    readings: previous.readings + 1,
    counters: connections,
    readAt: reading.at,
    history: withInterval(previous.history, [reading.at, carried, ms]),
  };
}

function withInterval(history: UplinkInterval[], interval: UplinkInterval): UplinkInterval[] {
  const next = [...history, interval];
  if (next.length <= UPLINK_HISTORY_POINTS) return next;
  // Full: merge neighbours from the oldest on (an odd last one stays as it is).
  const merged: UplinkInterval[] = [];
  for (let i = 0; i < next.length; i += 2) {
    const first = next[i] as UplinkInterval;
    const second = next[i + 1];
    merged.push(second ? [second[0], first[1] + second[1], first[2] + second[2]] : first);
  }
  return merged;
}

/** The chart's points: [end of the interval, bytes per second over it]. */
export function uplinkRatePoints(history: readonly UplinkInterval[]): Array<[number, number]> {
  return history.map(([end, bytes, ms]) => [end, ms > 0 ? (bytes * 1000) / ms : 0]);
}
