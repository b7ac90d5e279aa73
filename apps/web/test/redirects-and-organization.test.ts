import { describe, expect, it } from "vitest";
import { isOrganizationSlug, pickActiveOrganization } from "../src/auth/active-organization";
import { publicRedirect, safeCallbackPath } from "../src/auth/safe-redirect";

const memberships = [{ slug: "acme" }, { slug: "globex" }];

describe("pickActiveOrganization", () => {
  it("uses the cookie when it holds a slug", () => {
    expect(pickActiveOrganization("globex", memberships)).toBe("globex");
  });

  it("passes a slug the user is not a member of on to the API, which refuses it", () => {
    expect(pickActiveOrganization("initech", memberships)).toBe("initech");
  });

  it("falls back to the first membership without a cookie or with a malformed one", () => {
    expect(pickActiveOrganization(undefined, memberships)).toBe("acme");
    expect(pickActiveOrganization("../etc", memberships)).toBe("acme");
  });

  it("is null for a user without organizations", () => {
    expect(pickActiveOrganization(undefined, [])).toBeNull();
  });
});

describe("isOrganizationSlug", () => {
  it("accepts Keycloak aliases and rejects other text", () => {
    expect(isOrganizationSlug("acme")).toBe(true);
    expect(isOrganizationSlug("acme.eu_2")).toBe(true);
    expect(isOrganizationSlug("")).toBe(false);
    expect(isOrganizationSlug("a b")).toBe(false);
    expect(isOrganizationSlug("x".repeat(64))).toBe(false);
  });
});

describe("safeCallbackPath", () => {
  it("keeps same-site paths", () => {
    expect(safeCallbackPath("/fleet?status=online")).toBe("/fleet?status=online");
  });

  it("replaces absolute, protocol-relative and missing destinations", () => {
    expect(safeCallbackPath("https://evil.example/")).toBe("/fleet");
    expect(safeCallbackPath("//evil.example/")).toBe("/fleet");
    expect(safeCallbackPath("/\\evil.example")).toBe("/fleet");
    expect(safeCallbackPath(null)).toBe("/fleet");
  });
});

describe("publicRedirect", () => {
  const publicOrigin = "http://127.0.0.1:13000";
  const nextBase = "http://localhost:13000";

  it("re-roots same-site destinations on the public origin", () => {
    expect(publicRedirect("/fleet", nextBase, publicOrigin)).toBe("http://127.0.0.1:13000/fleet");
    expect(publicRedirect("http://localhost:13000/fleet?x=1", nextBase, publicOrigin)).toBe(
      "http://127.0.0.1:13000/fleet?x=1",
    );
    expect(publicRedirect("http://127.0.0.1:13000/fleet", nextBase, publicOrigin)).toBe(
      "http://127.0.0.1:13000/fleet",
    );
  });

  it("sends foreign destinations to the start page", () => {
    expect(publicRedirect("https://evil.example/fleet", nextBase, publicOrigin)).toBe(
      "http://127.0.0.1:13000/",
    );
    expect(publicRedirect("//evil.example/x", nextBase, publicOrigin)).toBe("http://127.0.0.1:13000/");
    expect(publicRedirect("http://127.0.0.1:9999/", nextBase, publicOrigin)).toBe("http://127.0.0.1:13000/");
  });
});
