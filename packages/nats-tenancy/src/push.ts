import { decode as decodeJwt } from "@nats-io/jwt";
import type { NatsConnection } from "@nats-io/transport-node";
import { accountClaimsUpdate } from "./subjects";

export class AccountPushError extends Error {}

/**
 * Installs or updates an account JWT on the hub (full resolver) through the system account.
 * The server applies it at once: a revocation in it disconnects the revoked users. Sent on the
 * account's own update subject, so the site leaves linked to the system account for this
 * account hear it too (and only they: a leaf hears only its own organization's updates).
 */
export async function pushAccountJwt(systemConnection: NatsConnection, accountJwt: string): Promise<void> {
  const account = decodeJwt<unknown>(accountJwt).sub;
  const reply = await systemConnection.request(accountClaimsUpdate(account), accountJwt, { timeout: 5000 });
  const body = reply.json<{
    data?: { code?: number; message?: string };
    error?: { code?: number; description?: string };
  }>();
  if (body.error || (body.data?.code !== undefined && body.data.code >= 300)) {
    throw new AccountPushError(
      `NATS refused the account JWT: ${body.error?.description ?? body.data?.message ?? "unknown error"}`,
    );
  }
}
