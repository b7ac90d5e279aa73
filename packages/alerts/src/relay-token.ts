import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The bearer token an organization's Alertmanager sends to the relay, derived from one gateway
 * secret (no per-organization secret to store; rotating the secret re-uploads every config).
 * Mimir's webhook payload names no tenant, so the relay learns the organization from the URL and
 * trusts it only when the token matches.
 */
export function relayToken(secret: string, organizationId: string): string {
  return createHmac("sha256", secret).update(`alertmanager-relay:${organizationId}`).digest("base64url");
}

export function relayTokenMatches(secret: string, organizationId: string, presented: string): boolean {
  const expected = Buffer.from(relayToken(secret, organizationId));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
