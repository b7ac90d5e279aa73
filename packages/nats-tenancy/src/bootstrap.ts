import { Algorithms, encodeAccount, encodeOperator, encodeUser } from "@nats-io/jwt";
import { createAccount, createOperator, createUser } from "@nats-io/nkeys";
import { z } from "zod";
import { formatCreds, keyPairFromSeed, seedOf } from "./keys";
import { enrollSubject } from "./subjects";

// The trust root of a control plane: one operator, the system account, the platform account
// (gateway, streams) and the enroll account (how a node without credentials reaches us).
// Tenant accounts are minted later, one per organization (see accounts.ts).

const accountSecretsSchema = z.object({ publicKey: z.string(), jwt: z.string(), userCreds: z.string() });

export const tenancySecretsSchema = z.object({
  version: z.literal(1),
  operator: z.object({ publicKey: z.string(), jwt: z.string(), signingSeed: z.string() }),
  system: accountSecretsSchema,
  platform: accountSecretsSchema,
  enroll: accountSecretsSchema,
  /** Listed as a signing key by every tenant account: the gateway signs node users with it. */
  tenantSigningSeed: z.string(),
  /**
   * Listed as a signing key by the system account: the gateway signs each site leaf's system
   * link with it (it may only hear its own organization's account updates). Absent in secrets
   * made before issue 8 #13: `upgradeTenancySecrets` adds it.
   */
  systemSigningSeed: z.string().optional(),
});
export type TenancySecrets = z.infer<typeof tenancySecretsSchema>;

const v2 = { algorithm: Algorithms.v2 };

/** Account limits are deny-by-default in JWTs: a missing field means 0 (no imports, no exports…). */
export const openAccountLimits = {
  conn: -1,
  leaf: -1,
  subs: -1,
  data: -1,
  payload: -1,
  imports: -1,
  exports: -1,
  wildcards: true,
};

/** Platform exports that tenant accounts import, each narrowed to their own organization. */
export const platformExports = [
  { name: "uplink", subject: "ef.t.*.up.>", type: "service" as const, response_type: "Singleton" as const },
  { name: "downlink", subject: "ef.t.*.down.>", type: "stream" as const },
  { name: "enroll", subject: enrollSubject, type: "service" as const, response_type: "Singleton" as const },
];

export async function createTenancySecrets(operatorName = "edgefleet"): Promise<TenancySecrets> {
  const operator = createOperator();
  const operatorSigning = createOperator();
  const system = createAccount();
  const platform = createAccount();
  const enroll = createAccount();
  const tenantSigning = createAccount();
  const systemSigning = createAccount();

  const operatorJwt = await encodeOperator(
    operatorName,
    operator,
    { signing_keys: [operatorSigning.getPublicKey()], system_account: system.getPublicKey() },
    v2,
  );
  const signAccount = (name: string, key: typeof system, claims: Parameters<typeof encodeAccount>[2]) =>
    encodeAccount(name, key, claims, { ...v2, signer: operatorSigning });

  const systemJwt = await systemAccountJwt(
    system.getPublicKey(),
    systemSigning.getPublicKey(),
    seedOf(operatorSigning),
  );
  const platformJwt = await signAccount("EDGEFLEET", platform, {
    exports: platformExports,
    limits: {
      ...openAccountLimits,
      mem_storage: -1,
      disk_storage: -1,
      streams: -1,
      consumer: -1,
    },
  });
  const enrollJwt = await signAccount("ENROLL", enroll, {
    imports: [{ name: "enroll", subject: enrollSubject, account: platform.getPublicKey(), type: "service" }],
    // Anyone holding the public enroll credentials lands here: keep it tiny.
    limits: { ...openAccountLimits, conn: 10_000, subs: 10_000, payload: 8 * 1024, exports: 0 },
  });

  const user = async (
    name: string,
    account: typeof system,
    permissions: Parameters<typeof encodeUser>[3],
  ) => {
    const key = createUser();
    const jwt = await encodeUser(name, key, account, permissions, v2);
    return formatCreds(jwt, key);
  };

  return {
    version: 1,
    operator: { publicKey: operator.getPublicKey(), jwt: operatorJwt, signingSeed: seedOf(operatorSigning) },
    system: {
      publicKey: system.getPublicKey(),
      jwt: systemJwt,
      userCreds: await user("gateway-system", system, {}),
    },
    platform: {
      publicKey: platform.getPublicKey(),
      jwt: platformJwt,
      userCreds: await user("gateway", platform, {}),
    },
    enroll: {
      publicKey: enroll.getPublicKey(),
      jwt: enrollJwt,
      // Public on purpose (shipped with the install command): it can only ask to enroll.
      userCreds: await user("enroll", enroll, {
        pub: { allow: [enrollSubject] },
        sub: { allow: ["_INBOX.>"] },
      }),
    },
    tenantSigningSeed: seedOf(tenantSigning),
    systemSigningSeed: seedOf(systemSigning),
  };
}

function systemAccountJwt(systemPublicKey: string, signingPublicKey: string, operatorSigningSeed: string) {
  return encodeAccount(
    "SYS",
    systemPublicKey,
    { limits: openAccountLimits, signing_keys: [signingPublicKey] },
    { ...v2, signer: keyPairFromSeed(operatorSigningSeed) },
  );
}

/**
 * Secrets made before the system account had a signing key get one (and a re-signed system
 * account JWT, newer than the one the hub's resolver holds); others are returned unchanged.
 */
export async function upgradeTenancySecrets(secrets: TenancySecrets): Promise<TenancySecrets> {
  if (secrets.systemSigningSeed) return secrets;
  const systemSigning = createAccount();
  return {
    ...secrets,
    system: {
      ...secrets.system,
      jwt: await systemAccountJwt(
        secrets.system.publicKey,
        systemSigning.getPublicKey(),
        secrets.operator.signingSeed,
      ),
    },
    systemSigningSeed: seedOf(systemSigning),
  };
}

/**
 * The nats-server configuration block for operator mode: a full resolver (accounts can be
 * added and updated at run time through $SYS.REQ.CLAIMS.UPDATE) preloaded with the fixed
 * accounts.
 */
export function serverAuthConfig(secrets: TenancySecrets, resolverDir: string): string {
  return [
    `operator: ${secrets.operator.jwt}`,
    `system_account: ${secrets.system.publicKey}`,
    "resolver: {",
    "  type: full",
    `  dir: ${JSON.stringify(resolverDir)}`,
    "  allow_delete: false",
    '  interval: "2m"',
    "}",
    "resolver_preload: {",
    `  ${secrets.system.publicKey}: ${secrets.system.jwt}`,
    `  ${secrets.platform.publicKey}: ${secrets.platform.jwt}`,
    `  ${secrets.enroll.publicKey}: ${secrets.enroll.jwt}`,
    "}",
    "",
  ].join("\n");
}
