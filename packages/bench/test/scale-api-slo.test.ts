import { describe, expect, it } from "vitest";
import type { TimedResponse } from "../src/console/http.js";
import { summarizeLatencies } from "../src/console/latency.js";
import { type ApiPhaseResult, apiSloVerdict, scaleApiCases } from "../src/scale/api-slo.js";

const answer = (status: number, body: unknown): TimedResponse =>
  ({ status, body: JSON.stringify(body), ttfbMs: 1, totalMs: 2, headers: {} }) as unknown as TimedResponse;

const cases = scaleApiCases({ nodeIds: ["n1", "n2"], siteIds: ["s1"], appIds: ["a1"], expectedTotal: 250 });
const byId = (id: string) => {
  const found = cases.find((c) => c.id === id);
  if (!found) throw new Error(`no case ${id}`);
  return found;
};

describe("the scale scenario's API cases", () => {
  it("rotate single-object calls over the fleet's ids", () => {
    expect([0, 1, 2].map((i) => byId("node").request(i).path)).toEqual([
      "/api/v1/nodes/n1",
      "/api/v1/nodes/n2",
      "/api/v1/nodes/n1",
    ]);
    expect(byId("site").request(5).path).toBe("/api/v1/sites/s1");
  });

  it("count a wrong answer as an error, not a sample", () => {
    expect(() => byId("node").check(answer(200, { id: "n1" }))).not.toThrow();
    expect(() => byId("node").check(answer(404, { message: "not found" }))).toThrow(/HTTP 404/);
    expect(() => byId("rest-counts").check(answer(200, { total: 249 }))).toThrow(/249 nodes, expected 250/);
    expect(() => byId("list").check(answer(200, { items: new Array(100).fill({}) }))).not.toThrow();
    expect(() => byId("list").check(answer(200, { items: [] }))).toThrow(/0 nodes/);
  });
});

describe("the API SLO verdict (single-object calls, p99 ≤ 1 s, no errors)", () => {
  const phase = (name: string, p99s: Record<string, number[]>, errors = 0): ApiPhaseResult => ({
    phase: name,
    passes: 1,
    cases: Object.entries(p99s).map(([caseId, samples]) => ({
      caseId,
      label: caseId,
      summary: summarizeLatencies(samples, errors),
      firstError: null,
    })),
  });

  it("takes the worst p99 of the single-object calls over every phase, ignoring lists", () => {
    const verdict = apiSloVerdict([
      phase("idle", { node: [10, 20], site: [30], app: [5], list: [5_000] }),
      phase("churn", { node: [900], site: [40], app: [6] }),
    ]);
    expect(verdict).toEqual({ worstP99Ms: 900, met: true });
  });

  it("misses past 1 s, with errors, or when a case was never measured", () => {
    expect(apiSloVerdict([phase("idle", { node: [1_200], site: [1], app: [1] })]).met).toBe(false);
    expect(apiSloVerdict([phase("idle", { node: [10], site: [1], app: [1] }, 1)]).met).toBe(false);
    expect(apiSloVerdict([phase("idle", { node: [], site: [1], app: [1] })])).toEqual({
      worstP99Ms: null,
      met: false,
    });
    expect(apiSloVerdict([])).toEqual({ worstP99Ms: null, met: false });
  });
});
