import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  isWithinMaintenanceWindow,
  type MaintenanceWindow,
  maintenanceWindowState,
  utcOffsetMinutes,
  WEEKDAYS,
  type Weekday,
} from "../src";

const MIN = 60_000;
const utc = (iso: string) => Date.parse(iso);
const at = (ms: number) => new Date(ms).toISOString();

/** An independent oracle: the zone's weekday and minute of day straight from Intl. */
function oracleOpen(windows: MaintenanceWindow[], zone: string, t: number): boolean {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    weekday: "short",
    hour: "numeric",
    minute: "numeric",
    hourCycle: "h23",
  }).formatToParts(new Date(t));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  const day = get("weekday").toLowerCase() as Weekday;
  const minute = Number(get("hour")) * 60 + Number(get("minute"));
  const yesterday = WEEKDAYS[(WEEKDAYS.indexOf(day) + 6) % 7] as Weekday;
  const clock = (s: string) => Number(s.slice(0, 2)) * 60 + Number(s.slice(3));
  return windows.some((w) => {
    const start = clock(w.start);
    const end = clock(w.end);
    if (start < end) return w.days.includes(day) && start <= minute && minute < end;
    return (w.days.includes(day) && minute >= start) || (w.days.includes(yesterday) && minute < end);
  });
}

describe("maintenanceWindowState", () => {
  it("is always open without windows", () => {
    expect(maintenanceWindowState(undefined, "UTC", utc("2025-06-02T10:00:00Z"))).toEqual({
      open: true,
      closesAt: null,
    });
  });

  it("opens and closes at the site's local time", () => {
    const windows: MaintenanceWindow[] = [{ days: ["mon"], start: "02:00", end: "04:00" }];
    // Monday 2025-06-02 in New York (UTC-4 in summer): 02:00 local = 06:00Z.
    const before = maintenanceWindowState(windows, "America/New_York", utc("2025-06-02T05:00:00Z"));
    expect(before.open).toBe(false);
    expect(!before.open && at(before.opensAt ?? 0)).toBe("2025-06-02T06:00:00.000Z");
    const inside = maintenanceWindowState(windows, "America/New_York", utc("2025-06-02T07:30:00Z"));
    expect(inside.open && at(inside.closesAt ?? 0)).toBe("2025-06-02T08:00:00.000Z");
    // Right after it closed: next Monday.
    const after = maintenanceWindowState(windows, "America/New_York", utc("2025-06-02T08:00:00Z"));
    expect(!after.open && at(after.opensAt ?? 0)).toBe("2025-06-09T06:00:00.000Z");
  });

  it("handles a window crossing midnight: it belongs to its start day", () => {
    const windows: MaintenanceWindow[] = [{ days: ["fri"], start: "22:00", end: "02:00" }];
    // Saturday 2025-06-07 01:00 UTC is inside Friday's window.
    const saturdayNight = maintenanceWindowState(windows, "UTC", utc("2025-06-07T01:00:00Z"));
    expect(saturdayNight.open && at(saturdayNight.closesAt ?? 0)).toBe("2025-06-07T02:00:00.000Z");
    // Saturday 23:00 is not (the window starts on Fridays only).
    const saturdayLate = maintenanceWindowState(windows, "UTC", utc("2025-06-07T23:00:00Z"));
    expect(!saturdayLate.open && at(saturdayLate.opensAt ?? 0)).toBe("2025-06-13T22:00:00.000Z");
  });

  it("merges touching windows into one open stretch", () => {
    const windows: MaintenanceWindow[] = [
      { days: ["mon"], start: "22:00", end: "24:00" },
      { days: ["tue"], start: "00:00", end: "03:00" },
    ];
    const state = maintenanceWindowState(windows, "UTC", utc("2025-06-02T23:00:00Z"));
    expect(state.open && at(state.closesAt ?? 0)).toBe("2025-06-03T03:00:00.000Z");
  });

  it("never closes when the windows cover the whole week", () => {
    const windows: MaintenanceWindow[] = [{ days: [...WEEKDAYS], start: "00:00", end: "24:00" }];
    expect(maintenanceWindowState(windows, "Europe/Berlin", utc("2025-03-30T00:30:00Z"))).toEqual({
      open: true,
      closesAt: null,
    });
  });

  it("spring forward: a window starting inside the skipped hour opens when the clock jumps", () => {
    // Berlin, Sunday 2025-03-30: 02:00 CET jumps to 03:00 CEST at 01:00Z.
    const windows: MaintenanceWindow[] = [{ days: ["sun"], start: "02:30", end: "03:30" }];
    const state = maintenanceWindowState(windows, "Europe/Berlin", utc("2025-03-30T00:00:00Z"));
    expect(!state.open && at(state.opensAt ?? 0)).toBe("2025-03-30T01:00:00.000Z");
    const inside = maintenanceWindowState(windows, "Europe/Berlin", utc("2025-03-30T01:10:00Z"));
    expect(inside.open && at(inside.closesAt ?? 0)).toBe("2025-03-30T01:30:00.000Z");
  });

  it("fall back: a wall-clock range that happens twice is open both times", () => {
    // Berlin, Sunday 2025-10-26: 03:00 CEST falls back to 02:00 CET at 01:00Z.
    const windows: MaintenanceWindow[] = [{ days: ["sun"], start: "02:15", end: "02:45" }];
    const first = maintenanceWindowState(windows, "Europe/Berlin", utc("2025-10-26T00:00:00Z"));
    expect(!first.open && at(first.opensAt ?? 0)).toBe("2025-10-26T00:15:00.000Z");
    const between = maintenanceWindowState(windows, "Europe/Berlin", utc("2025-10-26T00:50:00Z"));
    expect(!between.open && at(between.opensAt ?? 0)).toBe("2025-10-26T01:15:00.000Z");
  });

  it("a night window over the spring change is as long as the clock says", () => {
    // New York, 2025-03-09: 02:00 EST jumps to 03:00 EDT. Sat 23:00 → Sun 04:00 lasts 4 real hours.
    const windows: MaintenanceWindow[] = [{ days: ["sat"], start: "23:00", end: "04:00" }];
    const state = maintenanceWindowState(windows, "America/New_York", utc("2025-03-09T04:00:00Z"));
    expect(state.open && at(state.closesAt ?? 0)).toBe("2025-03-09T08:00:00.000Z");
  });

  it("knows half-hour daylight saving (Lord Howe) and quarter-hour offsets (Kathmandu)", () => {
    expect(utcOffsetMinutes("Australia/Lord_Howe", utc("2025-01-15T00:00:00Z"))).toBe(660);
    expect(utcOffsetMinutes("Australia/Lord_Howe", utc("2025-07-15T00:00:00Z"))).toBe(630);
    expect(utcOffsetMinutes("Asia/Kathmandu", utc("2025-07-15T00:00:00Z"))).toBe(345);
    const windows: MaintenanceWindow[] = [{ days: ["tue"], start: "09:00", end: "10:00" }];
    // Tuesday 2025-07-15 09:00 in Kathmandu = 03:15Z.
    const state = maintenanceWindowState(windows, "Asia/Kathmandu", utc("2025-07-15T00:00:00Z"));
    expect(!state.open && at(state.opensAt ?? 0)).toBe("2025-07-15T03:15:00.000Z");
  });

  const zones = [
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",
    "Asia/Kathmandu",
    "America/Santiago",
    "Pacific/Chatham",
  ];
  const quarter = fc.integer({ min: 0, max: 95 }).map((q) => {
    const minutes = q * 15;
    return `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
  });
  const windowArb = fc
    .record({
      days: fc.uniqueArray(fc.constantFrom(...WEEKDAYS), { minLength: 1, maxLength: 7 }),
      start: quarter,
      end: fc.oneof(quarter, fc.constant("24:00")),
    })
    .filter((w) => w.start !== w.end);

  /** Daylight-saving changes of 2025, to aim at them (uniform instants rarely hit one). */
  const changes: [string, string][] = [
    ["Europe/Berlin", "2025-03-30T01:00:00Z"],
    ["Europe/Berlin", "2025-10-26T01:00:00Z"],
    ["America/New_York", "2025-03-09T07:00:00Z"],
    ["America/New_York", "2025-11-02T06:00:00Z"],
    ["Australia/Lord_Howe", "2025-04-05T15:00:00Z"],
    ["Australia/Lord_Howe", "2025-10-04T15:30:00Z"],
    ["America/Santiago", "2025-04-06T03:00:00Z"],
  ];
  const anyInstant = fc.record({
    zone: fc.constantFrom(...zones),
    // Quarter hours from 2024 to 2026.
    start: fc.integer({ min: 0, max: 3 * 365 * 96 }).map((q) => utc("2024-01-01T00:00:00Z") + q * 15 * MIN),
  });
  const nearAChange = fc
    .record({ change: fc.constantFrom(...changes), q: fc.integer({ min: -4 * 96, max: 96 }) })
    .map(({ change: [zone, iso], q }) => ({ zone, start: utc(iso) + q * 15 * MIN }));

  it("agrees with an independent wall-clock oracle at every quarter hour (DST included)", () => {
    fc.assert(
      fc.property(
        fc.oneof(anyInstant, nearAChange),
        fc.array(windowArb, { minLength: 1, maxLength: 3 }),
        ({ zone, start }, windows) => {
          const state = maintenanceWindowState(windows, zone, start);
          expect(state.open).toBe(oracleOpen(windows, zone, start));
          expect(isWithinMaintenanceWindow(windows, zone, start)).toBe(state.open);
          const change = state.open ? state.closesAt : state.opensAt;
          if (change === null) {
            expect(state.open).toBe(true);
            return;
          }
          expect(change).toBeGreaterThan(start);
          for (let t = start; t < change; t += 15 * MIN)
            expect(oracleOpen(windows, zone, t)).toBe(state.open);
          expect(oracleOpen(windows, zone, change)).toBe(!state.open);
        },
      ),
      { numRuns: 150 },
    );
  });
});
