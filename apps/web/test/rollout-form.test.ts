import { describe, expect, it } from "vitest";
import {
  emptyBatch,
  type RolloutFormValues,
  rolloutFormDefaults,
  rolloutFormResolver,
} from "../src/app/rollouts/new/rollout-form";

const VERSION = "0190a4b2-7c1e-7d2a-9f3b-2a1b3c4d5e6f";
const SITE = "0190a4b2-7c1e-7d2a-9f3b-000000000001";

async function judge(values: RolloutFormValues) {
  // biome-ignore lint/suspicious/noExplicitAny: the resolver's context and options are unused here
  return rolloutFormResolver(values, undefined, {} as any);
}

describe("the new-rollout form, judged by the rollout strategy schema", () => {
  it("turns the defaults into the API's input: a canary of one with approval, a quarter, the rest", async () => {
    const { values, errors } = await judge(rolloutFormDefaults(VERSION));
    expect(errors).toEqual({});
    expect(values).toMatchObject({
      appVersionId: VERSION,
      target: { selector: "", siteIds: [] },
      strategy: {
        batches: [{ count: 1, pauseAfter: "approval" }, { percent: 25 }],
        defaults: { successThreshold: 100, timeoutSeconds: 1800, offline: "skip", pauseAfter: "none" },
        onBatchFailure: "pause",
      },
    });
  });

  it("puts each schema error on the field that produced the value", async () => {
    const form = rolloutFormDefaults(VERSION);
    form.target.selector = "tier in (";
    form.batches = [
      { ...emptyBatch("percent", "80") },
      { ...emptyBatch("percent", "30"), pauseAfter: "timed", pauseSeconds: "0" },
      { ...emptyBatch("selector"), selector: "tier=canary", limit: "0" },
    ];
    form.defaults.timeoutSeconds = "5";
    form.windows = [{ siteId: SITE, days: [], start: "25:00", end: "04:00" }];
    form.budget = { kind: "percent", value: "150" };
    const { errors } = await judge(form);
    const message = (path: string) =>
      path.split(".").reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key], errors) as
        | { message: string }
        | undefined;
    expect(message("target.selector")?.message).toBeTruthy();
    expect(message("batches.1.percent")?.message).toMatch(/add up to 110%/);
    expect(message("batches.1.pauseSeconds")?.message).toBeTruthy();
    expect(message("batches.2.limit")?.message).toBeTruthy();
    expect(message("defaults.timeoutSeconds")?.message).toMatch(/at least 10/);
    expect(message("windows.0.days")?.message).toMatch(/at least one day/);
    expect(message("windows.0.start")?.message).toMatch(/HH:MM/);
    expect(message("budget.value")?.message).toMatch(/at most 100/);
  });

  it("names a missing version and an empty size instead of sending them", async () => {
    const form = rolloutFormDefaults("");
    form.batches = [emptyBatch("count")];
    const { errors } = await judge(form);
    expect(Object.keys(errors)).toEqual(expect.arrayContaining(["appVersionId", "batches"]));
    expect(
      (errors.batches as unknown as Array<Record<string, { message: string }>>)[0]?.count?.message,
    ).toBeTruthy();
  });

  it("turns a site uplink budget in MB/s into bytes per second, and puts a zero on its field", async () => {
    const form = rolloutFormDefaults(VERSION);
    form.siteBandwidth = { megabytesPerSecond: "2.5", concurrentDownloads: "3" };
    const { values, errors } = await judge(form);
    expect(errors).toEqual({});
    expect((values as { strategy: { siteBandwidth: unknown } }).strategy.siteBandwidth).toEqual({
      bytesPerSecond: 2_500_000,
      concurrentDownloads: 3,
    });
    form.siteBandwidth = { megabytesPerSecond: "0", concurrentDownloads: "0" };
    const refused = (await judge(form)).errors as unknown as {
      siteBandwidth?: Record<string, { message: string }>;
    };
    expect(refused.siteBandwidth?.megabytesPerSecond?.message).toMatch(/at least 1 byte per second/);
    expect(refused.siteBandwidth?.concurrentDownloads?.message).toMatch(/at least 1/);
    expect((await judge(rolloutFormDefaults(VERSION))).values).not.toHaveProperty("strategy.siteBandwidth");
  });

  it("groups windows per site in the order given", async () => {
    const form = rolloutFormDefaults(VERSION);
    form.windows = [
      { siteId: SITE, days: ["sat", "sun"], start: "00:00", end: "24:00" },
      { siteId: SITE, days: ["mon"], start: "22:00", end: "04:00" },
    ];
    const { values, errors } = await judge(form);
    expect(errors).toEqual({});
    expect((values as { strategy: { maintenanceWindows: unknown } }).strategy.maintenanceWindows).toEqual({
      sites: {
        [SITE]: [
          { days: ["sat", "sun"], start: "00:00", end: "24:00" },
          { days: ["mon"], start: "22:00", end: "04:00" },
        ],
      },
    });
  });
});
