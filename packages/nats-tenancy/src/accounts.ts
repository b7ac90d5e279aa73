import { Algorithms, encodeAccount } from "@nats-io/jwt";
import { openAccountLimits, type TenancySecrets } from "./bootstrap";
import { keyPairFromSeed } from "./keys";
import { platformDownlink, platformUplink } from "./subjects";

export interface TenantAccount {
  /** The organization's account public key (an `A…` nkey), stored with the organization. */
  accountPublicKey: string;
  /** The organization's short wire id: the `<org>` token of platform subjects. */
  organizationWireId: string;
  name: string;
  /** Node public keys whose credentials no longer work, with the revocation time (unix s). */
  revokedUserKeys?: Record<string, number>;
}

/** Largest message a node may send; the protocol's per-message limits are smaller. */
export const TENANT_MAX_PAYLOAD = 1024 * 1024;

/**
 * The account JWT of one organization. It is derived entirely from the arguments, so the
 * gateway can re-issue it at any time (after a revocation, say) without stored state.
 * Its two imports are what makes the isolation: the organization's nodes reach exactly
 * `ef.t.<their org>.up.>` of the platform, and hear exactly `ef.t.<their org>.down.>`.
 */
export function tenantAccountJwt(secrets: TenancySecrets, account: TenantAccount): Promise<string> {
  const tenantSigning = keyPairFromSeed(secrets.tenantSigningSeed);
  return encodeAccount(
    account.name,
    account.accountPublicKey,
    {
      signing_keys: [tenantSigning.getPublicKey()],
      imports: [
        {
          name: "uplink",
          type: "service",
          account: secrets.platform.publicKey,
          subject: platformUplink(account.organizationWireId),
          local_subject: "ef.up.>",
        },
        {
          name: "downlink",
          type: "stream",
          account: secrets.platform.publicKey,
          subject: platformDownlink(account.organizationWireId),
          local_subject: "ef.down.>",
        },
      ],
      limits: {
        ...openAccountLimits,
        payload: TENANT_MAX_PAYLOAD,
        exports: 0,
        // JetStream only for the site artifact cache on the organization's site leaves, bounded
        // there by the leaf's own max_file_store and the stream's max_bytes (an account limit
        // above a server's store disables JetStream for the account on it, hence unlimited here).
        // Nodes' reliable messages are stored in the platform's EF_UP; on the hub no user of this
        // account may call the JetStream API but to read EF_SITE_CACHE, which exists only on leaves.
        mem_storage: 0,
        disk_storage: -1,
        streams: 1,
        consumer: 0,
      },
      revocations: account.revokedUserKeys ?? {},
    },
    { algorithm: Algorithms.v2, signer: keyPairFromSeed(secrets.operator.signingSeed) },
  );
}
