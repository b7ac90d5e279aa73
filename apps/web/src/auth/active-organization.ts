/**
 * The active organization is a UI choice kept in a cookie. It is NOT an authorization decision:
 * the API checks membership of whatever slug arrives, on every request.
 */
export const ACTIVE_ORGANIZATION_COOKIE = "edgefleet-org";

// Keycloak organization aliases, as accepted by @edgefleet/db for organization slugs.
const slugPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export function isOrganizationSlug(value: string): boolean {
  return slugPattern.test(value);
}

/** The cookie's slug if present and well-formed, else the user's first organization (or null). */
export function pickActiveOrganization(
  cookieValue: string | undefined,
  memberships: readonly { slug: string }[],
): string | null {
  if (cookieValue && isOrganizationSlug(cookieValue)) return cookieValue;
  return memberships[0]?.slug ?? null;
}
