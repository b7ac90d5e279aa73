import { describe, expect, it } from "vitest";
import { nextUplinkUse, UPLINK_HISTORY_POINTS, type UplinkUse, uplinkRatePoints } from "../src";

// A site's uplink use from successive /leafz readings (issue 11, #4): what the rollout page shows
// as bytes carried, current and peak rate, and the chart of rate over time.

const INTERVAL = 2_000;

function readAll(readings: Array<[at: number, connections: Record<string, number> | null]>): UplinkUse {
  let use: UplinkUse | null = null;
  for (const [at, connections] of readings) use = nextUplinkUse(use, { at, connections }, INTERVAL);
  if (!use) throw new Error("no readings");
  return use;
}

describe("nextUplinkUse", () => {
  it("starts from the first reading: nothing carried yet, no rate", () => {
    expect(readAll([[1_000, { "5": 12_345 }]])).toEqual({
      linked: true,
      bytes: 0,
      rateBps: null,
      peakBps: 0,
      readings: 1,
      counters: { "5": 12_345 },
      readAt: 1_000,
      history: [],
    });
  });

  it("sums the link's connections and rates each interval by the hub's clock", () => {
    const use = readAll([
      [0, { a: 100, b: 10 }],
      [2_000, { a: 2_100, b: 10 }],
      [6_000, { a: 2_100, b: 4_010 }],
    ]);
    expect(use.bytes).toBe(6_000);
    expect(use.rateBps).toBe(1_000);
    expect(use.peakBps).toBe(1_000);
    expect(use.history).toEqual([
      [2_000, 2_000, 2_000],
      [6_000, 4_000, 4_000],
    ]);
    expect(uplinkRatePoints(use.history)).toEqual([
      [2_000, 1_000],
      [6_000, 1_000],
    ]);
  });

  it("keeps the highest interval rate as the peak", () => {
    const use = readAll([
      [0, { a: 0 }],
      [2_000, { a: 8_000 }],
      [4_000, { a: 9_000 }],
    ]);
    expect(use.peakBps).toBe(4_000);
    expect(use.rateBps).toBe(500);
  });

  it("counts a reconnected link's new connection whole, and a dropped link as carrying nothing", () => {
    const use = readAll([
      [0, { a: 50_000 }],
      [2_000, null],
      // The leaf came back on a new connection: its counter started at 0 after the last reading.
      [4_000, { b: 3_000 }],
    ]);
    expect(use.bytes).toBe(3_000);
    expect(use.linked).toBe(true);
    expect(uplinkRatePoints(use.history)).toEqual([
      [2_000, 0],
      [4_000, 1_500],
    ]);
    expect(
      readAll([
        [0, { a: 1 }],
        [2_000, null],
      ]),
    ).toMatchObject({ linked: false, rateBps: 0, counters: {} });
  });

  it("skips a reading too close to the last one (its rate would be noise), keeping its bytes for the next", () => {
    const use = readAll([
      [0, { a: 0 }],
      [100, { a: 1_000_000 }],
      [2_000, { a: 1_000_000 }],
    ]);
    expect(use.readings).toBe(2);
    expect(use.peakBps).toBe(500_000);
    expect(use.bytes).toBe(1_000_000);
  });

  it("never counts a counter going backwards as negative bytes", () => {
    expect(
      readAll([
        [0, { a: 5_000 }],
        [2_000, { a: 4_000 }],
      ]).bytes,
    ).toBe(0);
  });

  it("keeps the history bounded by merging neighbours, conserving bytes and time", () => {
    const readings: Array<[number, Record<string, number>]> = [];
    for (let i = 0; i <= 3 * UPLINK_HISTORY_POINTS; i++) readings.push([i * 2_000, { a: i * 1_000 }]);
    const use = readAll(readings);
    expect(use.history.length).toBeLessThanOrEqual(UPLINK_HISTORY_POINTS);
    expect(use.history.length).toBeGreaterThan(UPLINK_HISTORY_POINTS / 4);
    expect(use.history.reduce((sum, [, bytes]) => sum + bytes, 0)).toBe(use.bytes);
    expect(use.history.reduce((sum, [, , ms]) => sum + ms, 0)).toBe(3 * UPLINK_HISTORY_POINTS * 2_000);
    expect(use.history.at(-1)?.[0]).toBe(3 * UPLINK_HISTORY_POINTS * 2_000);
    for (const [, rate] of uplinkRatePoints(use.history)) expect(rate).toBe(500);
  });
});
