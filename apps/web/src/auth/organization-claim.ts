import { isOrganizationSlug } from "./active-organization";

/**
 * Keycloak's `organization` claim comes in several shapes depending on the mapper settings:
 *   ["acme", "globex"]                         (default: aliases only)
 *   { "acme": {}, "globex": { "id": "…" } }    ("add organization attributes/id" enabled)
 *   "acme"                                     (single-valued mapper)
 * We only need the aliases, which are the organization slugs in our database.
 */
export function parseOrganizationClaim(claim: unknown): string[] {
  let aliases: unknown[];
  if (claim === undefined || claim === null) return [];
  if (typeof claim === "string") aliases = [claim];
  else if (Array.isArray(claim)) aliases = claim;
  else if (typeof claim === "object") aliases = Object.keys(claim);
  else throw new Error(`organization claim has unexpected type ${typeof claim}`);

  const slugs = new Set<string>();
  for (const alias of aliases) {
    if (typeof alias !== "string" || !isOrganizationSlug(alias)) {
      throw new Error(`organization claim holds an invalid alias: ${JSON.stringify(alias)}`);
    }
    slugs.add(alias);
  }
  return [...slugs].sort();
}
