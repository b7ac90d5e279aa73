import { describe, expect, it } from "vitest";
import { planRollout, rolloutStrategySchema, siteUplinkBudget, strategySiteIds } from "../src";
import { NEW, nodes, strategy, T0 } from "./fixtures";

// The per-site bandwidth budget of a rollout (issue 11, #4): what it accepts, what it refuses
// (naming the field), and how concurrent downloads cap a site's nodes updating at once.

function issues(input: unknown): { path: string; message: string }[] {
  const result = rolloutStrategySchema.safeParse(input);
  if (result.success) return [];
  return result.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
}

describe("siteBandwidth", () => {
  it("accepts bytes per second and concurrent downloads, rollout-wide and per site", () => {
    const parsed = strategy({
      batches: [{ count: 1 }],
      siteBandwidth: { bytesPerSecond: 1_000_000, sites: { "site-b": { concurrentDownloads: 2 } } },
    });
    expect(siteUplinkBudget(parsed, "site-a")).toEqual({ bytesPerSecond: 1_000_000 });
    expect(siteUplinkBudget(parsed, "site-b")).toEqual({ bytesPerSecond: 1_000_000, concurrentDownloads: 2 });
    expect(siteUplinkBudget(parsed, null)).toEqual({ bytesPerSecond: 1_000_000 });
    expect(strategySiteIds(parsed)).toContainEqual({
      siteId: "site-b",
      path: ["siteBandwidth", "sites", "site-b"],
    });
  });

  it.each([
    [{ bytesPerSecond: 0 }, "siteBandwidth.bytesPerSecond", "must be at least 1 byte per second"],
    [{ bytesPerSecond: -5 }, "siteBandwidth.bytesPerSecond", "must be at least 1 byte per second"],
    [{ bytesPerSecond: 1.5 }, "siteBandwidth.bytesPerSecond", ""],
    [{ concurrentDownloads: 0 }, "siteBandwidth.concurrentDownloads", "must be at least 1"],
    [{ concurrentDownloads: -1 }, "siteBandwidth.concurrentDownloads", "must be at least 1"],
    [
      { sites: { "site-a": { bytesPerSecond: 0 } } },
      "siteBandwidth.sites.site-a.bytesPerSecond",
      "must be at least 1",
    ],
    [{ bytesPerSecond: 1e11 }, "siteBandwidth.bytesPerSecond", "must be at most"],
    [{ bytesPerSec: 5 }, "siteBandwidth", ""],
  ])("refuses %j naming %s", (siteBandwidth, path, message) => {
    const found = issues({ batches: [{ count: 1 }], siteBandwidth });
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]?.path).toBe(path);
    expect(found[0]?.message).toContain(message);
  });

  it("concurrent downloads cap a site's nodes updating at once, with the disruption budget (the smaller wins)", () => {
    const targets = nodes(20, ["site-a", "site-b"]);
    const p = planRollout({
      nodes: targets,
      strategy: strategy({
        batches: [{ percent: 100 }],
        disruptionBudget: { maxUpdatingPerSite: { count: 4 } },
        siteBandwidth: { concurrentDownloads: 3, sites: { "site-b": { concurrentDownloads: 6 } } },
      }),
      targetVersionId: NEW,
      now: T0,
    });
    expect(p.sites.map((s) => [s.siteId, s.maxUpdating])).toEqual([
      ["site-a", 3],
      ["site-b", 4],
    ]);
    const downloadsOnly = planRollout({
      nodes: targets,
      strategy: strategy({ batches: [{ percent: 100 }], siteBandwidth: { concurrentDownloads: 2 } }),
      targetVersionId: NEW,
      now: T0,
    });
    expect(downloadsOnly.sites.map((s) => s.maxUpdating)).toEqual([2, 2]);
  });
});
