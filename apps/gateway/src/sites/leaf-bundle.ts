import { basename, dirname, join } from "node:path";
import {
  SITE_CACHE_DEFAULT_DIR,
  SITE_CACHE_DEFAULT_MAX_BYTES,
  SITE_CACHE_MAX_BYTES,
  SITE_CACHE_MIN_BYTES,
  siteToken,
} from "@edgefleet/agent-sdk/protocol";
import { type Db, recordSiteCredential, SITE_CREDENTIALS_DEFAULT_DAYS } from "@edgefleet/db";
import {
  formatCreds,
  leafNodeConfig,
  leafPingIntervalSeconds,
  siteLeafUserJwt,
  siteSystemLinkUserJwt,
  type TenancySecrets,
} from "@edgefleet/nats-tenancy";
import { createUser } from "@nats-io/nkeys";
import { z } from "zod";
import type { TenantAccounts } from "../enrollment/tenant-accounts.js";
import { siteLeafName } from "./leaf-links.js";

/** The site does not exist in that organization (also: another tenant's site). */
export class SiteNotFoundError extends Error {
  constructor(siteId: string, organizationId: string) {
    super(`site ${siteId} not found in organization ${organizationId}`);
    this.name = "SiteNotFoundError";
  }
}

export interface LeafBundle {
  /** nats-server configuration for the site's leaf node. */
  config: string;
  /** The site's credentials towards the hub (secret: keep it on the leaf machine only). */
  creds: string;
  /**
   * The files beside `creds` that the config refers to, by file name (companionFiles): the site's
   * system link (secret) and the public enrollment credentials. Empty when the tenancy secrets
   * predate the system signing key.
   */
  companions: Record<string, string>;
  /** When the credentials expire: re-issue the bundle before. */
  expiresAt: Date;
}

/**
 * File names of the bundle's companion credentials, in the directory of the site's creds:
 * `site.creds` → `site-system.creds` (one per site, even when several share a directory) and
 * `enroll.creds` (public, the same for every site).
 */
export function companionFiles(credentialsPath: string): { system: string; enroll: string } {
  return {
    system: `${basename(credentialsPath).replace(/\.creds$/, "")}-system.creds`,
    enroll: "enroll.creds",
  };
}

export interface LeafBundleInput {
  organizationId: string;
  siteId: string;
  /** The hub's leafnode URL(s) as the site reaches them, e.g. nats-leaf://hub.example.com:7422. */
  hubLeafUrls: string[];
  /** Where the site's agents connect, e.g. 0.0.0.0:4222. */
  listen: string;
  /** Where the creds file will live on the leaf machine (the config refers to it). */
  credentialsPath: string;
  /** Days the site credentials work (default SITE_CREDENTIALS_DEFAULT_DAYS). */
  validDays?: number;
  /**
   * The site artifact cache on the leaf (JetStream in the site's domain), bounded; null: none, the
   * site's nodes fetch from the hub. Every caller states it (siteCacheOptions gives the defaults).
   */
  siteCache: SiteCacheOptions | null;
}

/**
 * A bundle's site cache, as the console's internal API and the site-leaf CLI both parse it: on the
 * leaf machine at `storeDir` (default /var/lib/edgefleet/site-cache), bounded to `maxBytes`
 * (default 4 GiB, 16 MiB to 1 TiB).
 */
export const siteCacheOptions = z
  .object({
    storeDir: z
      .string()
      .regex(/^\/[^\s"\\]*$/, "storeDir must be an absolute path without spaces or quotes")
      .max(500)
      .default(SITE_CACHE_DEFAULT_DIR),
    maxBytes: z
      .int("maxBytes must be a whole number of bytes")
      .min(SITE_CACHE_MIN_BYTES, `maxBytes must be at least ${SITE_CACHE_MIN_BYTES} (16 MiB)`)
      .max(SITE_CACHE_MAX_BYTES, `maxBytes must be at most ${SITE_CACHE_MAX_BYTES} (1 TiB)`)
      .default(SITE_CACHE_DEFAULT_MAX_BYTES),
  })
  .strict();
export type SiteCacheOptions = z.output<typeof siteCacheOptions>;

/**
 * Everything an operator needs to run a site's leaf node: its config (operator mode, the
 * organization's account preloaded, one remote bound to that account) and fresh site
 * credentials. Each call mints a new site key that expires, and revokes the site's earlier keys
 * (issue 8, #2): the account JWT pushed to the hub, and shipped in this bundle, lists them.
 */
export async function createLeafBundle(
  db: Db,
  secrets: TenancySecrets,
  accounts: TenantAccounts,
  input: LeafBundleInput,
  /** The fleet's metrics interval (GATEWAY_METRICS_INTERVAL_S): the leaf pings only nodes silent longer. */
  fleet: { metricsIntervalS: number } = { metricsIntervalS: 60 },
): Promise<LeafBundle> {
  const site = await db.site.findFirst({
    where: { id: input.siteId, organizationId: input.organizationId },
    select: { id: true, name: true, wireId: true },
  });
  if (!site) throw new SiteNotFoundError(input.siteId, input.organizationId);
  // The hub must know the account before the site's leaf connects to it.
  await accounts.ensure(input.organizationId);
  const siteKey = createUser();
  const expiresAt = new Date(Date.now() + (input.validDays ?? SITE_CREDENTIALS_DEFAULT_DAYS) * 86_400_000);
  await recordSiteCredential(db, {
    organizationId: input.organizationId,
    siteId: site.id,
    publicKey: siteKey.getPublicKey(),
    expiresAt,
  });
  // Push at once (the NOTIFY also reaches every gateway): the earlier bundle stops working now.
  await accounts.publish(input.organizationId);
  const { account, jwt: accountJwt } = await accounts.currentJwt(input.organizationId);
  const identity = {
    siteId: site.id,
    // The site user may carry only this site's nodes' subjects (issue 8 #2).
    site: siteToken(site.wireId),
    publicKey: siteKey.getPublicKey(),
    accountPublicKey: account.accountPublicKey,
    expiresAt,
  };
  const siteJwt = await siteLeafUserJwt(secrets, identity);
  // Beside the site's creds on the leaf machine (the config names them by path).
  const beside = (name: string) => join(dirname(input.credentialsPath), name);
  const names = companionFiles(input.credentialsPath);
  const linked = Boolean(secrets.systemSigningSeed);
  return {
    expiresAt,
    companions: linked
      ? {
          [names.system]: formatCreds(await siteSystemLinkUserJwt(secrets, identity), siteKey),
          [names.enroll]: secrets.enroll.userCreds,
        }
      : {},
    config: leafNodeConfig(secrets, {
      serverName: siteLeafName(account.slug, site.name),
      listen: input.listen,
      hubLeafUrls: input.hubLeafUrls,
      credentialsPath: input.credentialsPath,
      accountPublicKey: account.accountPublicKey,
      accountJwt,
      ...(linked
        ? {
            systemCredentialsPath: beside(names.system),
            enrollCredentialsPath: beside(names.enroll),
          }
        : {}),
      ...(input.siteCache ? { siteCache: { siteId: site.id, ...input.siteCache } } : {}),
      pingIntervalSeconds: leafPingIntervalSeconds(fleet.metricsIntervalS),
    }),
    creds: formatCreds(siteJwt, siteKey),
  };
}
