import type { NatsConnection } from "@nats-io/transport-node";

export class AccountPushError extends Error {}

/**
 * Installs or updates an account JWT on the hub (full resolver) through the system account.
 * The server applies it at once: a revocation in it disconnects the revoked users.
 */
export async function pushAccountJwt(systemConnection: NatsConnection, accountJwt: string): Promise<void> {
  const reply = await systemConnection.request("$SYS.REQ.CLAIMS.UPDATE", accountJwt, { timeout: 5000 });
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
