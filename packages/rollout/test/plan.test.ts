import { matchesSelector, parseSelector } from "@edgefleet/selectors";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planRollout, RolloutInputError, type RolloutStrategyInput, siteKey, type TargetNode } from "../src";
import { fleetArb, strategyArb } from "./arbitraries";
import { NEW, node, nodes, strategy, T0 } from "./fixtures";

const plan = (targets: TargetNode[], input: RolloutStrategyInput, now = T0) =>
  planRollout({ nodes: targets, strategy: strategy(input), targetVersionId: NEW, now });
const ids = (p: ReturnType<typeof plan>) => p.batches.map((b) => b.nodeIds);

describe("planRollout, by example", () => {
  it("counts nodes already on the version and never batches them", () => {
    const targets = [...nodes(4), node("current-1", { currentVersionId: NEW })];
    const p = plan(targets, { batches: [{ count: 2 }] });
    expect(p.alreadyCurrent).toEqual(["current-1"]);
    expect(p.totals).toEqual({ target: 5, toUpdate: 4, alreadyCurrent: 1, offline: 0 });
    expect(ids(p)).toEqual([
      ["n000", "n001"],
      ["n002", "n003"],
    ]);
    expect(p.batches[1]?.source).toEqual({ kind: "remainder" });
  });

  it("takes percentages of the nodes to update, rounded up, without floating-point dust", () => {
    const p = plan(nodes(30), { batches: [{ percent: 10 }, { percent: 1 }, { percent: 50 }] });
    expect(p.batches.map((b) => b.nodeIds.length)).toEqual([3, 1, 15, 11]);
  });

  it("spreads a batch over the sites in proportion (stratified), by id within a site", () => {
    const targets = nodes(30, ["site-a", "site-b", "site-c"]);
    const p = plan(targets, { batches: [{ percent: 10 }] });
    expect(p.batches[0]?.sites.map((s) => [s.siteId, s.nodes])).toEqual([
      ["site-a", 1],
      ["site-b", 1],
      ["site-c", 1],
    ]);
    // Each site's first node by id.
    expect(p.batches[0]?.nodeIds).toEqual(["n000", "n001", "n002"]);
  });

  it("fills selector batches from what earlier batches left, up to their limit", () => {
    const targets = [
      node("a", { labels: { tier: "canary" } }),
      node("b", { labels: { tier: "canary" } }),
      node("c", { labels: { tier: "canary" } }),
      node("d", { labels: { tier: "canary" } }),
      node("e"),
      node("f"),
    ];
    const p = plan(targets, {
      batches: [
        { count: 1 },
        { selector: "tier=canary", limit: { percent: 50 } },
        { selector: "tier=canary" },
      ],
    });
    expect(ids(p)).toEqual([["a"], ["b", "c"], ["d"], ["e", "f"]]);
    expect(p.batches.map((b) => b.source.kind)).toEqual(["count", "selector", "selector", "remainder"]);
  });

  it("keeps a batch that gets no node (indexes stay those of the strategy) and warns", () => {
    const p = plan(nodes(3), { batches: [{ selector: "tier=canary" }, { count: 5 }, { count: 1 }] });
    expect(ids(p)).toEqual([[], ["n000", "n001", "n002"], []]);
    expect(p.warnings.map((w) => w.code === "empty_batch" && w.batch)).toEqual([0, 2]);
    expect(p.warnings[0]?.message).toContain("selector matches no node");
  });

  it("carries each batch's metric gates into the plan, defaults filled in", () => {
    const gate = {
      name: "cpu",
      metric: { preset: "app_cpu" as const },
      criterion: { kind: "threshold" as const, max: 0.5 },
    };
    const p = plan(nodes(2), { batches: [{ count: 1, gates: [gate] }] });
    expect(p.batches[0]?.policy.gates).toEqual([
      {
        ...gate,
        windowSeconds: 300,
        critical: false,
        criterion: { kind: "threshold", max: 0.5, failureLimit: 0 },
      },
    ]);
    expect(p.batches[1]?.policy.gates).toEqual([]);
    expect(p.warnings).toEqual([]);
  });

  it("resolves each batch's policy from its own fields and the defaults", () => {
    const p = plan(nodes(4), {
      batches: [{ count: 1, successThreshold: 50, pauseAfter: "approval" }],
      defaults: { timeoutSeconds: 60, offline: "wait" },
    });
    expect(p.batches[0]?.policy).toMatchObject({
      successThreshold: 50,
      timeoutSeconds: 60,
      offline: "wait",
      pauseAfter: "approval",
    });
    expect(p.batches[1]?.policy).toMatchObject({ successThreshold: 100, pauseAfter: "none" });
  });

  it("reports per site: nodes, budget (percent rounds down, never below 1), windows now", () => {
    const targets = [
      ...nodes(10, ["site-a"]).map((n) => ({ ...n, id: `a${n.id}`, siteTimeZone: "Europe/Berlin" })),
      ...nodes(3, ["site-b"]).map((n) => ({ ...n, id: `b${n.id}`, online: false })),
      node("loose", { siteId: null, siteTimeZone: null }),
    ];
    const p = plan(targets, {
      batches: [{ percent: 50 }],
      disruptionBudget: { maxUpdatingPerSite: { percent: 25 }, sites: { "site-b": { count: 2 } } },
      maintenanceWindows: { sites: { "site-a": [{ days: ["mon"], start: "12:00", end: "14:00" }] } },
    });
    expect(p.sites.map((s) => [s.siteId, s.timeZone, s.targetNodes, s.maxUpdating])).toEqual([
      ["site-a", "Europe/Berlin", 10, 2],
      ["site-b", "UTC", 3, 2],
      [null, "UTC", 1, 1],
    ]);
    // Monday 10:00 UTC = 12:00 in Berlin: open until 14:00 Berlin = 12:00 UTC.
    expect(p.sites[0]?.windowNow).toEqual({ open: true, closesAt: Date.UTC(2025, 5, 2, 12, 0) });
    expect(p.sites[1]?.windows).toBeNull();
    expect(p.totals.offline).toBe(3);
    expect(p.batches[0]?.sites.find((s) => s.siteId === "site-b")?.offline).toBe(
      p.batches[0]?.sites.find((s) => s.siteId === "site-b")?.nodes,
    );
  });

  it.each([
    ["a duplicate node", [node("x"), node("x")], ["nodes", 1, "id"], "listed twice"],
    [
      "an unknown zone",
      [node("x", { siteTimeZone: "Mars/Base" })],
      ["nodes", 0, "siteTimeZone"],
      "unknown time zone",
    ],
    [
      "a site with two zones",
      [node("x"), node("y", { siteTimeZone: "Europe/Berlin" })],
      ["nodes", 1, "siteTimeZone"],
      "disagree",
    ],
  ])("refuses %s with an error naming the field", (_name, targets, path, message) => {
    try {
      plan(targets, { batches: [{ count: 1 }] });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(RolloutInputError);
      expect((error as RolloutInputError).path).toEqual(path);
      expect((error as RolloutInputError).message).toContain(message);
    }
  });
});

describe("planRollout, properties", () => {
  it("batches are disjoint and, with the already-current nodes, cover the target exactly", () => {
    fc.assert(
      fc.property(fleetArb(), strategyArb(), (targets, s) => {
        const p = planRollout({ nodes: targets, strategy: s, targetVersionId: NEW, now: T0 });
        const planned = [...p.alreadyCurrent, ...p.batches.flatMap((b) => b.nodeIds)];
        expect(new Set(planned).size).toBe(planned.length);
        expect([...planned].sort()).toEqual(targets.map((n) => n.id).sort());
        for (const id of p.alreadyCurrent) {
          expect(targets.find((n) => n.id === id)?.currentVersionId).toBe(NEW);
        }
        expect(p.totals.toUpdate + p.totals.alreadyCurrent).toBe(targets.length);
      }),
      { numRuns: 200 },
    );
  });

  it("every batch has the size its step asks for, and selector batches only matching nodes", () => {
    fc.assert(
      fc.property(fleetArb(), strategyArb(), (targets, s) => {
        const p = planRollout({ nodes: targets, strategy: s, targetVersionId: NEW, now: T0 });
        const byId = new Map(targets.map((n) => [n.id, n]));
        let left = p.totals.toUpdate;
        s.batches.forEach((step, i) => {
          const batch = p.batches[i];
          expect(batch?.index).toBe(i);
          const size = batch?.nodeIds.length ?? -1;
          if (step.count !== undefined) expect(size).toBe(Math.min(step.count, left));
          if (step.percent !== undefined) {
            expect(size).toBe(
              Math.min(Math.ceil(Math.round(step.percent * p.totals.toUpdate * 1e7) / 1e9), left),
            );
          }
          if (step.selector !== undefined) {
            const requirements = parseSelector(step.selector);
            for (const id of batch?.nodeIds ?? []) {
              expect(matchesSelector(requirements, byId.get(id)?.labels ?? {})).toBe(true);
            }
            if (step.limit?.count !== undefined) expect(size).toBeLessThanOrEqual(step.limit.count);
          }
          left -= size;
        });
        // Per-site counts add up to the batch.
        for (const batch of p.batches) {
          expect(batch.sites.reduce((sum, site) => sum + site.nodes, 0)).toBe(batch.nodeIds.length);
        }
        expect(p.batches.slice(s.batches.length).every((b) => b.source.kind === "remainder")).toBe(true);
        expect(p.batches.length - s.batches.length).toBe(left > 0 ? 1 : 0);
      }),
      { numRuns: 200 },
    );
  });

  it("is deterministic: the order of the input does not matter", () => {
    fc.assert(
      fc.property(fleetArb(), strategyArb(), (targets, s) => {
        const reversed = [...targets].reverse();
        const a = planRollout({ nodes: targets, strategy: s, targetVersionId: NEW, now: T0 });
        const b = planRollout({ nodes: reversed, strategy: s, targetVersionId: NEW, now: T0 });
        expect(b).toEqual(a);
      }),
      { numRuns: 100 },
    );
  });

  it("a prefix of the order holds about the same share of every site (stratification)", () => {
    fc.assert(
      fc.property(fleetArb(80), fc.integer({ min: 1, max: 100 }), (targets, percent) => {
        const p = planRollout({
          nodes: targets,
          strategy: strategy({ batches: [{ percent }] }),
          targetVersionId: NEW,
          now: T0,
        });
        const first = p.batches[0];
        if (!first || p.totals.toUpdate === 0) return;
        const share = first.nodeIds.length / p.totals.toUpdate;
        for (const site of p.sites) {
          const inBatch = first.sites.find((s) => siteKey(s.siteId) === siteKey(site.siteId))?.nodes ?? 0;
          // Within one node of the site's proportional share.
          expect(Math.abs(inBatch - share * site.toUpdate)).toBeLessThanOrEqual(1 + 1e-9);
        }
      }),
      { numRuns: 200 },
    );
  });
});
