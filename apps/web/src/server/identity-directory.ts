import "server-only";
import { keycloakDirectory } from "@edgefleet/api";
import { env } from "~/env";

/**
 * Keycloak's side of membership (invitations, removals), as the console client's service account:
 * the same client id and secret the sign-in uses, no extra setting.
 */
export const identityDirectory = keycloakDirectory({
  issuer: env.AUTH_KEYCLOAK_ISSUER,
  clientId: env.AUTH_KEYCLOAK_ID,
  clientSecret: env.AUTH_KEYCLOAK_SECRET,
});
