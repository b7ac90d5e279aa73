import { matchesSelector, parseSelector } from "@edgefleet/selectors";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_HARDWARE_LABELS,
  hardwareKey,
  planRollout,
  type RolloutStrategyInput,
  rolloutStrategySchema,
  selectCanary,
  siteKey,
  type TargetNode,
} from "../src";
import { fleetArb } from "./arbitraries";
import { NEW, node, T0 } from "./fixtures";

const HW = ["pi4", "x86", "jetson"];
const stratum = (n: TargetNode) => `${siteKey(n.siteId)}|${hardwareKey(n, DEFAULT_HARDWARE_LABELS)}`;

/** A fleet whose nodes also carry an `hw` label (or none). */
const hardwareFleetArb = (maxNodes = 60, minNodes = 0) =>
  fleetArb(maxNodes, minNodes).chain((nodes) =>
    fc
      .array(fc.constantFrom(...HW, undefined), { minLength: nodes.length, maxLength: nodes.length })
      .map((hws) =>
        nodes.map((n, i): TargetNode => {
          const hw = hws[i];
          return hw ? { ...n, labels: { ...n.labels, hw } } : n;
        }),
      ),
  );

/** 3 sites × 2 kinds of hardware, 5 nodes each, ids in site order (the first N by id: one site). */
function grid(): TargetNode[] {
  const nodes: TargetNode[] = [];
  for (const site of ["site-a", "site-b", "site-c"]) {
    for (const hw of ["pi4", "x86"]) {
      for (let k = 0; k < 5; k++) {
        nodes.push(node(`${site}-${hw}-${k}`, { siteId: site, labels: { hw } }));
      }
    }
  }
  return nodes;
}

const plan = (nodes: TargetNode[], input: RolloutStrategyInput, now = T0) =>
  planRollout({ nodes, strategy: rolloutStrategySchema.parse(input), targetVersionId: NEW, now });

describe("selectCanary, by example", () => {
  it("gives every (site, hardware) stratum a node when the batch is big enough, not the first N by id", () => {
    const picked = selectCanary({ candidates: grid(), size: 6, seed: "s" });
    expect(new Set(picked.nodeIds.map((id) => id.replace(/-\d$/, ""))).size).toBe(6);
    expect(picked.strata.every((s) => s.picked === 1)).toBe(true);
    expect(picked.tiers).toEqual({ ready: 6, window_closed: 0, offline: 0 });
  });

  it("covers as many sites and hardware kinds as it can when the batch is smaller than the strata", () => {
    const nodes = grid();
    const picked = selectCanary({ candidates: nodes, size: 2, seed: "s" });
    const chosen = nodes.filter((n) => picked.nodeIds.includes(n.id));
    expect(new Set(chosen.map((n) => n.siteId)).size).toBe(2);
    expect(new Set(chosen.map((n) => n.labels.hw)).size).toBe(2);
  });

  it("shares the rest of a big batch in proportion to the strata's sizes", () => {
    const nodes = [
      ...Array.from({ length: 30 }, (_, i) => node(`big-${i}`, { siteId: "big" })),
      ...Array.from({ length: 10 }, (_, i) => node(`small-${i}`, { siteId: "small" })),
    ];
    const picked = selectCanary({ candidates: nodes, size: 8, seed: "s" });
    expect(picked.nodeIds.filter((id) => id.startsWith("big")).length).toBe(6);
    expect(picked.nodeIds.filter((id) => id.startsWith("small")).length).toBe(2);
  });

  it("passes over sites outside their window and offline nodes while others can start now", () => {
    const nodes = [
      ...grid(),
      node("offline-1", { siteId: "site-d", online: false, labels: { hw: "jetson" } }),
    ];
    const picked = selectCanary({
      candidates: nodes,
      size: 4,
      seed: "s",
      siteOpen: (siteId) => siteId !== "site-c",
    });
    expect(picked.nodeIds.some((id) => id.startsWith("site-c") || id === "offline-1")).toBe(false);
    expect(picked.closedSites).toEqual(["site-c"]);
    // When the open sites run out, the closed ones fill up (they wait for their window).
    const all = selectCanary({ candidates: nodes, size: 22, seed: "s", siteOpen: (s) => s !== "site-c" });
    expect(all.tiers).toEqual({ ready: 20, window_closed: 2, offline: 0 });
  });

  it("is deterministic for a seed; another seed picks other nodes of the same strata", () => {
    const a = selectCanary({ candidates: grid(), size: 6, seed: "one" });
    expect(selectCanary({ candidates: [...grid()].reverse(), size: 6, seed: "one" })).toEqual(a);
    const b = selectCanary({ candidates: grid(), size: 6, seed: "two" });
    expect(b.nodeIds).not.toEqual(a.nodeIds);
    expect(b.strata.map((s) => s.picked)).toEqual(a.strata.map((s) => s.picked));
  });

  it("is what the planner's first batch takes, and the plan says how it covers the strata", () => {
    const p = plan(grid(), { batches: [{ count: 4 }, { percent: 50 }] });
    expect(p.batches[0]?.nodeIds).toEqual(selectCanary({ candidates: grid(), size: 4, seed: NEW }).nodeIds);
    expect(p.canary).toMatchObject({
      seed: NEW,
      strata: { total: 6, covered: 4 },
      sites: { total: 3, covered: 3 },
      hardware: { total: 2, covered: 2 },
    });
    expect(p.canary?.uncovered).toHaveLength(2);
    // `ordered` keeps the old behaviour: the head of the site-stratified order.
    const ordered = plan(grid(), { batches: [{ count: 3 }], canary: { mode: "ordered" } });
    expect(ordered.batches[0]?.nodeIds).toEqual(["site-a-pi4-0", "site-b-pi4-0", "site-c-pi4-0"]);
    expect(ordered.canary).toBeNull();
  });

  it("respects the rollout's maintenance windows per site (in the site's zone)", () => {
    // T0 is Monday 10:00 UTC; site-a and site-b only open at night.
    const night = [{ days: ["mon" as const], start: "22:00", end: "23:00" }];
    const p = plan(grid(), {
      batches: [{ count: 4 }],
      maintenanceWindows: { sites: { "site-a": night, "site-b": night } },
    });
    expect(p.batches[0]?.nodeIds.every((id) => id.startsWith("site-c"))).toBe(true);
    expect(p.canary?.closedSites).toEqual(["site-a", "site-b"]);
  });
});

describe("selectCanary, properties", () => {
  it("picks exactly min(size, candidates) distinct candidates, never anything else", () => {
    fc.assert(
      fc.property(hardwareFleetArb(), fc.integer({ min: 0, max: 80 }), fc.string(), (nodes, size, seed) => {
        const picked = selectCanary({ candidates: nodes, size, seed });
        const ids = new Set(nodes.map((n) => n.id));
        expect(picked.nodeIds).toHaveLength(Math.min(size, nodes.length));
        expect(new Set(picked.nodeIds).size).toBe(picked.nodeIds.length);
        for (const id of picked.nodeIds) expect(ids.has(id)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("represents every stratum when the batch is at least the number of strata", () => {
    fc.assert(
      fc.property(hardwareFleetArb(60, 1), fc.integer({ min: 0, max: 60 }), (fleet, extra) => {
        const nodes = fleet.map((n) => ({ ...n, online: true }));
        const strata = new Set(nodes.map(stratum));
        const size = Math.min(nodes.length, strata.size + extra);
        const picked = new Set(selectCanary({ candidates: nodes, size, seed: "x" }).nodeIds);
        const covered = new Set(nodes.filter((n) => picked.has(n.id)).map(stratum));
        expect(covered).toEqual(strata);
      }),
      { numRuns: 300 },
    );
  });

  it("covers min(size, strata) strata, and as many sites as it can, when it is smaller", () => {
    fc.assert(
      fc.property(hardwareFleetArb(60, 1), fc.integer({ min: 1, max: 20 }), (fleet, size) => {
        const nodes = fleet.map((n) => ({ ...n, online: true }));
        const picked = new Set(selectCanary({ candidates: nodes, size, seed: "x" }).nodeIds);
        const chosen = nodes.filter((n) => picked.has(n.id));
        const strata = new Set(nodes.map(stratum)).size;
        const sites = new Set(nodes.map((n) => siteKey(n.siteId))).size;
        expect(new Set(chosen.map(stratum)).size).toBe(Math.min(size, strata, nodes.length));
        expect(new Set(chosen.map((n) => siteKey(n.siteId))).size).toBe(Math.min(size, sites));
      }),
      { numRuns: 300 },
    );
  });

  it("is deterministic for a seed, whatever the order of the candidates", () => {
    fc.assert(
      fc.property(hardwareFleetArb(), fc.integer({ min: 0, max: 60 }), fc.string(), (nodes, size, seed) => {
        const a = selectCanary({ candidates: nodes, size, seed });
        const b = selectCanary({ candidates: [...nodes].reverse(), size, seed });
        expect(b).toEqual(a);
      }),
      { numRuns: 200 },
    );
  });

  it("takes nodes that can start now before closed sites, and those before offline nodes", () => {
    fc.assert(
      fc.property(
        hardwareFleetArb(60, 1),
        fc.integer({ min: 1, max: 60 }),
        fc.subarray(["site-1", "site-2", "site-3", "site-4", ""]),
        (nodes, size, closed) => {
          const siteOpen = (siteId: string | null) => !closed.includes(siteKey(siteId));
          const picked = new Set(selectCanary({ candidates: nodes, size, seed: "x", siteOpen }).nodeIds);
          const tier = (n: TargetNode) => (!n.online ? 2 : siteOpen(n.siteId) ? 0 : 1);
          const worstPicked = Math.max(...nodes.filter((n) => picked.has(n.id)).map(tier), -1);
          const bestLeft = Math.min(...nodes.filter((n) => !picked.has(n.id)).map(tier), 3);
          expect(worstPicked).toBeLessThanOrEqual(bestLeft);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("through the planner: the first batch never holds a node outside its selector", () => {
    fc.assert(
      fc.property(
        hardwareFleetArb(),
        fc.constantFrom("tier=canary", "env in (prod,staging)", "gpu", "!gpu", "hw=pi4"),
        fc.integer({ min: 1, max: 30 }),
        (nodes, selector, limit) => {
          const p = plan(nodes, { batches: [{ selector, limit: { count: limit } }] });
          const requirements = parseSelector(selector);
          const byId = new Map(nodes.map((n) => [n.id, n]));
          for (const id of p.batches[0]?.nodeIds ?? []) {
            expect(matchesSelector(requirements, byId.get(id)?.labels ?? {})).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
