/**
 * Whether a site is inside a maintenance window at an instant, and until when.
 *
 * Windows are weekly wall-clock ranges in the site's zone. Between two UTC-offset changes the wall
 * clock is the instant plus a constant offset, so each such stretch is solved exactly in wall-clock
 * minutes; offset changes (daylight saving) are found by sampling the offset every few hours and
 * bisecting to the minute. Consequences, which the tests pin down: a window whose start falls
 * into the hour skipped in spring opens when the clock jumps past it; a wall-clock range that
 * occurs twice in autumn is open both times; a window crossing midnight belongs to its start day.
 */
import { type MaintenanceWindow, WEEKDAYS } from "./strategy";
import { DAY_MS, type EpochMs, HOUR_MS, MINUTE_MS } from "./time";
import { utcOffsetMinutes } from "./time-zones";

export type WindowState =
  /** `closesAt`: null when the windows never close (they cover the whole week). */
  | { open: true; closesAt: EpochMs | null }
  /** `opensAt`: null only if no window opens within eight days (not possible for valid windows). */
  | { open: false; opensAt: EpochMs | null };

const MINUTES_PER_DAY = 24 * 60;
/** Far enough to see every weekly window open once, plus a daylight-saving shift. */
const HORIZON_MS = 8 * DAY_MS + 2 * HOUR_MS;
/** No zone changes its offset twice within this (real ones are months apart). */
const OFFSET_SAMPLE_MS = 6 * HOUR_MS;

interface Occurrence {
  /** Wall-clock minutes since 1970-01-01T00:00 (as if the zone were UTC). */
  start: number;
  end: number;
}

function minutesOf(clock: string): number {
  const [h, m] = clock.split(":").map(Number);
  return (h as number) * 60 + (m as number);
}

/** Occurrences of the windows that start on wall-clock days `firstDay`..`lastDay` (days since epoch). */
function occurrences(windows: MaintenanceWindow[], firstDay: number, lastDay: number): Occurrence[] {
  const result: Occurrence[] = [];
  for (let day = firstDay; day <= lastDay; day++) {
    const weekday = WEEKDAYS[(((day + 4) % 7) + 7) % 7] as (typeof WEEKDAYS)[number]; // 1970-01-01 was a Thursday
    for (const window of windows) {
      if (!window.days.includes(weekday)) continue;
      const start = minutesOf(window.start);
      const end = minutesOf(window.end);
      const base = day * MINUTES_PER_DAY;
      result.push({ start: base + start, end: base + (end > start ? end : end + MINUTES_PER_DAY) });
    }
  }
  return result;
}

/** Wall-clock side: the state at wall time `wall` (minutes, may be fractional). */
function wallState(
  windows: MaintenanceWindow[],
  wall: number,
): { open: true; closes: number | null } | { open: false; opens: number | null } {
  const today = Math.floor(wall / MINUTES_PER_DAY);
  const all = occurrences(windows, today - 1, today + 8).sort((a, b) => a.start - b.start);
  const containing = all.filter((o) => o.start <= wall && wall < o.end);
  if (containing.length === 0) {
    const next = all.find((o) => o.start >= wall);
    return { open: false, opens: next ? next.start : null };
  }
  // Merge overlapping or touching occurrences into one open stretch.
  let closes = Math.max(...containing.map((o) => o.end));
  for (const o of all) {
    if (o.start <= closes && o.end > closes) closes = o.end;
  }
  const lastVisible = (today + 8) * MINUTES_PER_DAY;
  return { open: true, closes: closes >= lastVisible ? null : closes };
}

/** First instant in (from, limit] whose offset differs from the offset at `from`, or null. */
function nextOffsetChange(timeZone: string, from: EpochMs, limit: EpochMs): EpochMs | null {
  const offset = utcOffsetMinutes(timeZone, from);
  let low = from;
  for (let probe = from + OFFSET_SAMPLE_MS; ; probe += OFFSET_SAMPLE_MS) {
    const high = Math.min(probe, limit);
    if (utcOffsetMinutes(timeZone, high) !== offset) {
      // Bisect on whole minutes: offsets change on minute boundaries.
      let lo = Math.floor(low / MINUTE_MS);
      let hi = Math.ceil(high / MINUTE_MS);
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (utcOffsetMinutes(timeZone, mid * MINUTE_MS) === offset) lo = mid;
        else hi = mid;
      }
      return Math.max(hi * MINUTE_MS, from + 1);
    }
    if (high >= limit) return null;
    low = high;
  }
}

/**
 * The state of a site's windows at `at`: open (and when it closes) or closed (and when it opens).
 * No windows at all means always open.
 */
export function maintenanceWindowState(
  windows: MaintenanceWindow[] | undefined,
  timeZone: string,
  at: EpochMs,
): WindowState {
  if (!windows || windows.length === 0) return { open: true, closesAt: null };
  const limit = at + HORIZON_MS;
  const openAtStart = wallState(windows, wallMinutes(timeZone, at)).open;
  let from = at;
  while (from < limit) {
    const offset = utcOffsetMinutes(timeZone, from);
    const segmentEnd = nextOffsetChange(timeZone, from, limit) ?? limit;
    const state = wallState(windows, (from + offset * MINUTE_MS) / MINUTE_MS);
    if (openAtStart) {
      if (!state.open) return { open: true, closesAt: from };
      if (state.closes === null) return { open: true, closesAt: null };
      const closesAt = (state.closes - offset) * MINUTE_MS;
      if (closesAt < segmentEnd) return { open: true, closesAt };
    } else {
      if (state.open) return { open: false, opensAt: from };
      if (state.opens !== null) {
        const opensAt = (state.opens - offset) * MINUTE_MS;
        if (opensAt < segmentEnd) return { open: false, opensAt };
      }
    }
    from = segmentEnd;
  }
  return openAtStart ? { open: true, closesAt: null } : { open: false, opensAt: null };
}

/** Whether the windows are open at `at` (no windows: always). */
export function isWithinMaintenanceWindow(
  windows: MaintenanceWindow[] | undefined,
  timeZone: string,
  at: EpochMs,
): boolean {
  if (!windows || windows.length === 0) return true;
  return wallState(windows, wallMinutes(timeZone, at)).open;
}

function wallMinutes(timeZone: string, at: EpochMs): number {
  return (at + utcOffsetMinutes(timeZone, at) * MINUTE_MS) / MINUTE_MS;
}
