import { describe, expect, it } from "vitest";
import { parseOrganizationClaim } from "../src/auth/organization-claim";

describe("parseOrganizationClaim", () => {
  it("reads the default array of aliases", () => {
    expect(parseOrganizationClaim(["globex", "acme"])).toEqual(["acme", "globex"]);
  });

  it("reads an object keyed by alias", () => {
    expect(parseOrganizationClaim({ acme: { id: "3b23" }, globex: {} })).toEqual(["acme", "globex"]);
  });

  it("reads a single string", () => {
    expect(parseOrganizationClaim("acme")).toEqual(["acme"]);
  });

  it("treats a missing claim as no memberships", () => {
    expect(parseOrganizationClaim(undefined)).toEqual([]);
    expect(parseOrganizationClaim(null)).toEqual([]);
  });

  it("removes duplicates", () => {
    expect(parseOrganizationClaim(["acme", "acme"])).toEqual(["acme"]);
  });

  it("rejects aliases that are not slugs", () => {
    expect(() => parseOrganizationClaim(["Acme Energy"])).toThrow(/invalid alias/);
    expect(() => parseOrganizationClaim(["-acme"])).toThrow(/invalid alias/);
    expect(() => parseOrganizationClaim([42])).toThrow(/invalid alias/);
  });

  it("rejects a claim of another type", () => {
    expect(() => parseOrganizationClaim(7)).toThrow(/unexpected type/);
  });
});
