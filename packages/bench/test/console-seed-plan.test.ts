import { describe, expect, it } from "vitest";
import {
  bucketCase,
  DISTRIBUTIONS,
  nodeChunks,
  nodeName,
  planTotals,
  REGIONS,
  seedPlan,
  sitesOf,
} from "../src/console/seed-plan.js";

describe("console benchmark seed plan", () => {
  it("holds 100,000 nodes with 1,000,000 app instances in one organization, and a second one", () => {
    const plan = seedPlan({ nodes: 100_000, appsPerNode: 10, sites: 200, secondOrganizationNodes: 10_000 });
    expect(plan.organizations.map((o) => o.slug)).toEqual(["acme", "globex"]);
    const [large, second] = plan.organizations;
    expect(large).toEqual({ slug: "acme", nodes: 100_000, sites: 200, appsPerNode: 10 });
    expect(second?.sites).toBe(20);
    expect(planTotals(plan)).toEqual({ nodes: 110_000, appInstances: 1_100_000, sites: 220, steps: 11 });
  });

  it("leaves the second organization out when asked for none", () => {
    const plan = seedPlan({ nodes: 1_000, appsPerNode: 2, sites: 10, secondOrganizationNodes: 0 });
    expect(plan.organizations).toHaveLength(1);
    expect(planTotals(plan).appInstances).toBe(2_000);
  });

  it("refuses sizes it cannot seed", () => {
    expect(() => seedPlan({ nodes: 0, appsPerNode: 1, sites: 1, secondOrganizationNodes: 0 })).toThrow(
      RangeError,
    );
    expect(() =>
      seedPlan({ nodes: 1_000_000, appsPerNode: 1, sites: 1, secondOrganizationNodes: 0 }),
    ).toThrow(/six digits/);
    expect(() => seedPlan({ nodes: 10.5, appsPerNode: 1, sites: 1, secondOrganizationNodes: 0 })).toThrow(
      RangeError,
    );
  });

  it("cuts nodes into inclusive chunks that cover every index once", () => {
    expect(nodeChunks(25_001, 10_000)).toEqual([
      { from: 1, to: 10_000 },
      { from: 10_001, to: 20_000 },
      { from: 20_001, to: 25_001 },
    ]);
    expect(nodeChunks(0, 10)).toEqual([]);
    expect(() => nodeChunks(10, 0)).toThrow(RangeError);
  });

  it("names nodes and sites the way the cases select them", () => {
    expect(nodeName(42)).toBe("edge-000042");
    const sites = sitesOf({ slug: "acme", nodes: 10, sites: 7, appsPerNode: 1 });
    expect(sites[6]).toEqual({ name: "plant-7", region: REGIONS[0] });
    expect(sites[1]?.region).toBe("eu-north");
  });

  it("has distributions whose shares add up to 100", () => {
    for (const distribution of Object.values(DISTRIBUTIONS)) {
      expect(Object.values(distribution).reduce((sum: number, share) => sum + share, 0)).toBe(100);
    }
  });

  it("maps buckets to values by cumulative share, and refuses shares that do not add up", () => {
    expect(bucketCase("b", { online: 85, offline: 15 }, "::node_status")).toBe(
      "(CASE WHEN b < 85 THEN 'online'::node_status WHEN b < 100 THEN 'offline'::node_status END)",
    );
    expect(bucketCase("b", { "it's": 100 })).toBe("(CASE WHEN b < 100 THEN 'it''s' END)");
    expect(() => bucketCase("b", { a: 50, b: 40 })).toThrow(/add up to 100/);
  });
});
