/**
 * IANA time zones through the runtime's own tz database (`Intl`), no library: validation and the
 * UTC offset of a zone at an instant, which is all the maintenance windows need.
 */
import { z } from "zod";
import { type EpochMs, MINUTE_MS } from "./time";

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/**
 * Whether `name` is an IANA zone name the runtime knows (`Europe/Berlin`, `America/New_York`,
 * `UTC`). Fixed offsets such as `+01:00` are refused on purpose: they have no daylight-saving
 * rules, so a window written in one would drift by an hour twice a year.
 */
export function isValidTimeZone(name: string): boolean {
  if (name.length === 0 || name.length > 64 || /^[+-]/.test(name)) return false;
  try {
    formatterFor(name);
    return true;
  } catch {
    return false;
  }
}

/** A site's time zone, as the API and the console validate it. */
export const timeZoneSchema = z.string().refine(isValidTimeZone, {
  error: (issue) =>
    `unknown time zone ${JSON.stringify(issue.input)}: use an IANA name such as "Europe/Berlin" or "UTC"`,
});

/** Offset of the zone's wall clock from UTC at `at`, in whole minutes (east positive: Berlin in summer = 120). */
export function utcOffsetMinutes(timeZone: string, at: EpochMs): number {
  const parts = formatterFor(timeZone).formatToParts(new Date(at));
  const field = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value);
  const wallMs = Date.UTC(
    field("year"),
    field("month") - 1,
    field("day"),
    field("hour"),
    field("minute"),
    field("second"),
  );
  const atWholeSeconds = Math.floor(at / 1000) * 1000;
  return Math.round((wallMs - atWholeSeconds) / MINUTE_MS);
}
