import { describe, expect, it } from "vitest";
import {
  DEFAULT_POLICY,
  isValidTimeZone,
  rolloutStrategySchema,
  strategySiteIds,
  timeZoneSchema,
} from "../src";

const GATE = { name: "cpu", metric: { preset: "app_cpu" }, criterion: { kind: "compare" } };

function issues(input: unknown): { path: string; message: string }[] {
  const result = rolloutStrategySchema.safeParse(input);
  if (result.success) return [];
  return result.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
}

describe("rolloutStrategySchema", () => {
  it("fills in every default", () => {
    const parsed = rolloutStrategySchema.parse({ batches: [{ count: 1 }] });
    expect(parsed).toEqual({
      batches: [{ count: 1 }],
      defaults: { ...DEFAULT_POLICY },
      onBatchFailure: "pause",
    });
  });

  it("accepts every documented form", () => {
    const input = {
      batches: [
        { count: 5, pauseAfter: "approval" },
        { percent: 20, successThreshold: 90, timeoutSeconds: 600, pauseAfter: { seconds: 300 } },
        { selector: "tier=canary", limit: { count: 3 } },
        {
          selector: "env in (prod)",
          limit: { percent: 50 },
          offline: "wait",
          waitSeconds: 120,
          afterWait: "fail",
        },
        {
          selector: "gpu",
          gates: [{ name: "cpu", metric: { preset: "app_cpu" }, criterion: { kind: "threshold", max: 0.8 } }],
        },
      ],
      defaults: { successThreshold: 95, offline: "fail", pauseAfter: "none" },
      disruptionBudget: { maxUpdatingPerSite: { percent: 25 }, sites: { "site-a": { count: 2 } } },
      maintenanceWindows: {
        default: [{ days: ["sat", "sun"], start: "00:00", end: "24:00" }],
        sites: { "site-a": [{ days: ["mon", "tue"], start: "22:00", end: "04:00" }] },
      },
      onBatchFailure: "rollback",
    };
    const parsed = rolloutStrategySchema.parse(input);
    expect(parsed.batches[4]?.gates).toEqual([
      {
        name: "cpu",
        metric: { preset: "app_cpu" },
        windowSeconds: 300,
        critical: false,
        criterion: { kind: "threshold", max: 0.8, failureLimit: 0 },
      },
    ]);
    expect(parsed.defaults.timeoutSeconds).toBe(DEFAULT_POLICY.timeoutSeconds);
    expect(strategySiteIds(parsed)).toEqual([
      { siteId: "site-a", path: ["maintenanceWindows", "sites", "site-a"] },
      { siteId: "site-a", path: ["disruptionBudget", "sites", "site-a"] },
    ]);
  });

  it.each([
    ["no batches", { batches: [] }, "batches", "give at least one batch"],
    ["count 0", { batches: [{ count: 0 }] }, "batches.0.count", "must be at least 1"],
    ["fractional count", { batches: [{ count: 1.5 }] }, "batches.0.count", ""],
    ["percent 0", { batches: [{ count: 1 }, { percent: 0 }] }, "batches.1.percent", "greater than 0"],
    ["percent over 100", { batches: [{ percent: 101 }] }, "batches.0.percent", "at most 100"],
    [
      "percents adding up past 100",
      { batches: [{ percent: 30 }, { count: 2 }, { percent: 80 }] },
      "batches.2.percent",
      "add up to 110%",
    ],
    [
      "a batch after 100%",
      { batches: [{ percent: 40 }, { percent: 60 }, { selector: "tier=canary" }] },
      "batches.2",
      "never gets a node",
    ],
    [
      "a batch of nothing",
      { batches: [{ count: 1 }, { successThreshold: 50 }] },
      "batches.1",
      "needs one of",
    ],
    [
      "two kinds in one batch",
      { batches: [{ count: 1, percent: 5 }] },
      "batches.0.percent",
      "already has count",
    ],
    [
      "limit without selector",
      { batches: [{ count: 2, limit: { count: 1 } }] },
      "batches.0.limit",
      "selector",
    ],
    [
      "limit with both",
      { batches: [{ selector: "a", limit: { count: 1, percent: 5 } }] },
      "batches.0.limit.percent",
      "not both",
    ],
    [
      "empty limit",
      { batches: [{ selector: "a", limit: {} }] },
      "batches.0.limit",
      "either count or percent",
    ],
    ["bad selector", { batches: [{ selector: "env in prod" }] }, "batches.0.selector", "position 7"],
    ["unknown batch field", { batches: [{ count: 1, size: 3 }] }, "batches.0", "size"],
    [
      "threshold over 100",
      { batches: [{ count: 1, successThreshold: 120 }] },
      "batches.0.successThreshold",
      "100",
    ],
    [
      "tiny timeout",
      { batches: [{ count: 1 }], defaults: { timeoutSeconds: 5 } },
      "defaults.timeoutSeconds",
      "10",
    ],
    ["unknown offline policy", { batches: [{ count: 1, offline: "ignore" }] }, "batches.0.offline", ""],
    ["bad afterWait", { batches: [{ count: 1, afterWait: "wait" }] }, "batches.0.afterWait", ""],
    [
      "waitSeconds 0",
      { batches: [{ count: 1 }], defaults: { waitSeconds: 0 } },
      "defaults.waitSeconds",
      "at least 1",
    ],
    ["bad pause", { batches: [{ count: 1, pauseAfter: "forever" }] }, "batches.0.pauseAfter", '"approval"'],
    [
      "pause of 0 s",
      { batches: [{ count: 1, pauseAfter: { seconds: 0 } }] },
      "batches.0.pauseAfter.seconds",
      ">=1",
    ],
    [
      "gate without metric",
      { batches: [{ count: 1, gates: [{ name: "x" }] }] },
      "batches.0.gates.0.metric",
      "",
    ],
    [
      "gate with an unknown preset",
      { batches: [{ count: 1, gates: [{ ...GATE, metric: { preset: "gpu" } }] }] },
      "batches.0.gates.0.metric",
      "preset",
    ],
    [
      "gate with an unknown criterion",
      { batches: [{ count: 1, gates: [{ ...GATE, criterion: { kind: "vibes" } }] }] },
      "batches.0.gates.0.criterion.kind",
      "",
    ],
    [
      "threshold without bounds",
      { batches: [{ count: 1, gates: [{ ...GATE, criterion: { kind: "threshold" } }] }] },
      "batches.0.gates.0.criterion.max",
      "give max, min or both",
    ],
    [
      "gate window longer than the batch timeout",
      { batches: [{ count: 1, timeoutSeconds: 120, gates: [{ ...GATE, windowSeconds: 600 }] }] },
      "batches.0.gates.0.windowSeconds",
      "longer than the batch timeout",
    ],
    [
      "default gate window longer than a batch's timeout",
      { batches: [{ count: 1, timeoutSeconds: 60 }], defaults: { gates: [{ ...GATE, windowSeconds: 120 }] } },
      "batches.0.timeoutSeconds",
      "longer than the batch timeout",
    ],
    [
      "two gates of one name",
      { batches: [{ count: 1, gates: [GATE, GATE] }] },
      "batches.0.gates.1.name",
      "used twice",
    ],
    [
      "empty PromQL",
      { batches: [{ count: 1, gates: [{ ...GATE, metric: { promql: "  " } }] }] },
      "batches.0.gates.0.metric.promql",
      "empty",
    ],
    [
      "bad gate action",
      { batches: [{ count: 1 }], gateActions: { onFail: "ignore" } },
      "gateActions.onFail",
      "",
    ],
    [
      "budget of 0",
      { batches: [{ count: 1 }], disruptionBudget: { maxUpdatingPerSite: { count: 0 } } },
      "disruptionBudget.maxUpdatingPerSite.count",
      "at least 1",
    ],
    [
      "site budget without size",
      { batches: [{ count: 1 }], disruptionBudget: { maxUpdatingPerSite: { count: 1 }, sites: { s: {} } } },
      "disruptionBudget.sites.s",
      "either count or percent",
    ],
    [
      "window without days",
      {
        batches: [{ count: 1 }],
        maintenanceWindows: { default: [{ days: [], start: "01:00", end: "02:00" }] },
      },
      "maintenanceWindows.default.0.days",
      "at least one day",
    ],
    [
      "unknown day",
      {
        batches: [{ count: 1 }],
        maintenanceWindows: { default: [{ days: ["mon", "fun"], start: "01:00", end: "02:00" }] },
      },
      "maintenanceWindows.default.0.days.1",
      "",
    ],
    [
      "a day twice",
      {
        batches: [{ count: 1 }],
        maintenanceWindows: { default: [{ days: ["mon", "mon"], start: "01:00", end: "02:00" }] },
      },
      "maintenanceWindows.default.0.days.1",
      "listed twice",
    ],
    [
      "bad start time",
      {
        batches: [{ count: 1 }],
        maintenanceWindows: { sites: { s1: [{ days: ["mon"], start: "24:00", end: "02:00" }] } },
      },
      "maintenanceWindows.sites.s1.0.start",
      "HH:MM",
    ],
    [
      "bad end time",
      {
        batches: [{ count: 1 }],
        maintenanceWindows: { default: [{ days: ["mon"], start: "01:00", end: "2:00" }] },
      },
      "maintenanceWindows.default.0.end",
      "HH:MM",
    ],
    [
      "empty window",
      {
        batches: [{ count: 1 }],
        maintenanceWindows: { default: [{ days: ["mon"], start: "01:00", end: "01:00" }] },
      },
      "maintenanceWindows.default.0.end",
      "empty",
    ],
    [
      "empty window list",
      { batches: [{ count: 1 }], maintenanceWindows: { sites: { s1: [] } } },
      "maintenanceWindows.sites.s1",
      "at least one window",
    ],
    ["bad onBatchFailure", { batches: [{ count: 1 }], onBatchFailure: "ignore" }, "onBatchFailure", ""],
  ])("refuses %s, naming the field", (_name, input, path, message) => {
    const found = issues(input);
    expect(found.map((i) => i.path)).toContain(path);
    expect(found.find((i) => i.path === path)?.message).toContain(message);
  });

  it("accepts percentages that add up to exactly 100, and a window over midnight", () => {
    expect(
      issues({
        batches: [{ percent: 33.3 }, { percent: 33.3 }, { percent: 33.4 }],
        maintenanceWindows: { default: [{ days: ["fri"], start: "22:00", end: "02:00" }] },
      }),
    ).toEqual([]);
  });
});

describe("time zones", () => {
  it.each([
    "UTC",
    "Europe/Berlin",
    "America/Argentina/Buenos_Aires",
    "Australia/Lord_Howe",
    "Asia/Kathmandu",
  ])("accepts %s", (zone) => {
    expect(isValidTimeZone(zone)).toBe(true);
    expect(timeZoneSchema.safeParse(zone).success).toBe(true);
  });

  it.each(["", "Mars/Olympus", "Europe/Berln", "+01:00", "-05:00", "not a zone", "x".repeat(65)])(
    "refuses %j",
    (zone) => {
      expect(isValidTimeZone(zone)).toBe(false);
      const result = timeZoneSchema.safeParse(zone);
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.message).toContain("unknown time zone");
    },
  );
});
