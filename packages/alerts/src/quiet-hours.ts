/**
 * Quiet hours of a site: a daily span, in the site's own time zone, during which its warning and
 * info alerts are held back. Alertmanager does the muting (`time_intervals` with a `location`,
 * and `mute_time_intervals` on the site's routes); when the span ends, alerts still firing are
 * sent at the next group interval. Critical alerts are never held: they are what should wake
 * someone at night.
 */
import { z } from "zod";
import type { AlertSeverity } from "./policy";

/** "HH:MM", 00:00 to 24:00 (24:00 only as an end). */
export const clockTimeSchema = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, "a time of day as HH:MM, e.g. 22:00");

export const quietHoursSchema = z
  .object({ start: clockTimeSchema, end: clockTimeSchema })
  .refine((span) => span.start !== span.end, { message: "start and end must differ", path: ["end"] })
  .refine((span) => span.start !== "24:00", { message: "start must be before 24:00", path: ["start"] });
export type QuietHours = z.infer<typeof quietHoursSchema>;

export interface SiteQuietHours extends QuietHours {
  siteId: string;
  /** IANA zone; null: UTC. */
  timeZone: string | null;
}

/** Severities that quiet hours hold back. */
export const QUIET_SEVERITIES: readonly AlertSeverity[] = ["warning", "info"];

export function quietIntervalName(siteId: string): string {
  return `quiet-hours-${siteId}`;
}

/** Alertmanager's `time_intervals` entry; a span past midnight becomes two ranges of the same day. */
export function quietTimeInterval(quiet: SiteQuietHours) {
  const times =
    quiet.start < quiet.end
      ? [{ start_time: quiet.start, end_time: quiet.end }]
      : [
          { start_time: quiet.start, end_time: "24:00" },
          { start_time: "00:00", end_time: quiet.end },
        ].filter((range) => range.start_time !== range.end_time);
  return {
    name: quietIntervalName(quiet.siteId),
    time_intervals: [{ times, location: quiet.timeZone ?? "UTC" }],
  };
}
