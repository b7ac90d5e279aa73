import { describe, expect, it } from "vitest";
import { matchesSelector, parseSelector, SelectorSyntaxError } from "../src/index";

describe("parseSelector", () => {
  it("parses every requirement kind", () => {
    expect(
      parseSelector("site=plant-7, tier!=canary,env in (prod, staging),env notin (dev),gpu,!arm"),
    ).toEqual([
      { key: "site", op: "eq", value: "plant-7" },
      { key: "tier", op: "neq", value: "canary" },
      { key: "env", op: "in", values: ["prod", "staging"] },
      { key: "env", op: "notin", values: ["dev"] },
      { key: "gpu", op: "exists" },
      { key: "arm", op: "notexists" },
    ]);
  });

  it("accepts == and prefixed keys, and the empty selector", () => {
    expect(parseSelector("edgefleet.io/zone==a")).toEqual([
      { key: "edgefleet.io/zone", op: "eq", value: "a" },
    ]);
    expect(parseSelector("")).toEqual([]);
    expect(parseSelector("   ")).toEqual([]);
  });

  it.each([
    ["site=", 5, "expected a value, found end of input"],
    ["site=plant 7", 11, 'expected "," or end, found "7"'],
    ["site=a,", 7, "expected a label key, found end of input"],
    ["env in prod", 7, 'expected "(" after in/notin, found "prod"'],
    ["env in (prod", 12, 'expected "," or ")", found end of input'],
    ["env in ()", 8, 'expected a value, found ")"'],
    ["site=plant#7", 10, 'unexpected character "#"'],
    ["-bad=x", 0, 'invalid label key "-bad"'],
    ["a=b!c", 3, 'expected "," or end, found "!"'],
    ["tier>1", 4, 'unexpected character ">"'],
    [`k=${"v".repeat(64)}`, 2, `invalid value "${"v".repeat(64)}"`],
  ])("rejects %j at position %i", (input, position, reason) => {
    let caught: unknown;
    try {
      parseSelector(input);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SelectorSyntaxError);
    expect(caught).toMatchObject({ position, reason });
    expect((caught as Error).message).toBe(`invalid selector at position ${position}: ${reason}`);
  });

  it("rejects an overlong selector", () => {
    expect(() => parseSelector("a,".repeat(600))).toThrow(/longer than 1000 characters/);
  });
});

describe("matchesSelector", () => {
  const labels = { site: "plant-7", tier: "stable" };
  it.each([
    ["site=plant-7", true],
    ["site=plant-9", false],
    ["tier!=canary", true],
    ["gpu!=yes", true],
    ["site in (plant-7,plant-9)", true],
    ["gpu in (yes)", false],
    ["site notin (plant-7)", false],
    ["gpu notin (yes)", true],
    ["site", true],
    ["!site", false],
    ["!gpu", true],
    ["site=plant-7,tier=canary", false],
  ])("%s -> %s", (selector, expected) => {
    expect(matchesSelector(parseSelector(selector), labels)).toBe(expected);
  });
});
