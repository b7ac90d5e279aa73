import {
  SITE_CACHE_DIRECT_GET_SUBJECT,
  siteCacheDomain,
  siteCacheSeedSubjects,
} from "@edgefleet/agent-sdk/protocol";
import { Algorithms, encodeUser } from "@nats-io/jwt";
import type { TenancySecrets } from "./bootstrap";
import { nodeAddress } from "./downlink";
import { keyPairFromSeed } from "./keys";
import {
  accountClaimsUpdate,
  accountDisconnectEvents,
  nodeDownlink,
  nodeInbox,
  nodeUplink,
  siteDownlink,
  siteInbox,
  siteUplink,
} from "./subjects";

export interface NodeIdentity {
  nodeId: string;
  /** Organization wire id (the downlink token is derived from it). */
  org: string;
  /** Short wire id used in the node's subjects. */
  wid: string;
  /** Token of the node's site in its subjects (`siteToken`: `_<site wire id>`, `_` without a site). */
  site: string;
  /** The node's own `U…` public nkey: the private half never leaves the node. */
  publicKey: string;
  accountPublicKey: string;
}

/**
 * A node's user JWT (subject layout 2): it may publish only on its own uplink
 * `ef.up.<site>.<wid>.>` and hear only its own downlink `ef.down.<site>.<wid>.<token>` and inbox
 * `_INBOX.<site>.<wid>.>`, so no payload field can ever make it speak for another node, and no
 * other node can name its downlink (the token). The agent reads its subjects from these
 * permissions (`nodeAddressFromJwt`). It may also read its site's artifact cache (a JetStream
 * direct get on EF_SITE_CACHE, served by its own leaf in its own organization's account): read
 * only, and nothing else of JetStream.
 */
export function nodeUserJwt(secrets: TenancySecrets, node: NodeIdentity): Promise<string> {
  const address = nodeAddress(secrets, node);
  return encodeUser(
    node.nodeId,
    node.publicKey,
    node.accountPublicKey,
    {
      pub: { allow: [nodeUplink(address), SITE_CACHE_DIRECT_GET_SUBJECT], deny: [] },
      sub: { allow: [nodeDownlink(address), nodeInbox(address)], deny: [] },
      subs: 16,
      payload: -1,
      data: -1,
    },
    { algorithm: Algorithms.v2, signer: keyPairFromSeed(secrets.tenantSigningSeed) },
  );
}

export interface SiteIdentity {
  siteId: string;
  /** The site's token in its nodes' subjects (`siteToken` of its wire id). */
  site: string;
  publicKey: string;
  accountPublicKey: string;
  /** When the credentials stop working (the JWT's `exp`): a leaf must be re-issued its bundle before. */
  expiresAt: Date;
}

/**
 * The credentials a site's leaf node uses towards the hub. The leaf enforces each node's own
 * permissions locally (it runs in operator mode too); towards the hub the site may carry only its
 * own nodes' subjects (issue 8 #2): up `ef.up.<site>.>`, down `ef.down.<site>.>` and
 * `_INBOX.<site>.>`. So whoever holds the site's credentials (the leaf machine's operator) can
 * neither speak for nor listen to another site's nodes. For the site artifact cache the hub may also
 * send it JetStream API requests for the site's own domain and chunks on the site's own seed
 * subjects; the leaf answers on the seeder's inbox prefix.
 */
export function siteLeafUserJwt(secrets: TenancySecrets, site: SiteIdentity): Promise<string> {
  return encodeUser(
    `site-${site.siteId}`,
    site.publicKey,
    site.accountPublicKey,
    {
      pub: { allow: [siteUplink(site.site), `${siteCacheSeederInbox(site.siteId)}.>`], deny: [] },
      sub: {
        allow: [
          siteDownlink(site.site),
          siteInbox(site.site),
          `$JS.${siteCacheDomain(site.siteId)}.API.>`,
          siteCacheSeedSubjects(site.siteId),
        ],
        deny: [],
      },
      allowed_connection_types: ["LEAFNODE"],
      subs: -1,
      payload: -1,
      data: -1,
    },
    {
      algorithm: Algorithms.v2,
      signer: keyPairFromSeed(secrets.tenantSigningSeed),
      exp: Math.floor(site.expiresAt.getTime() / 1000),
    },
  );
}

/**
 * The credentials of a site leaf's second link, bound to the system account (issue 8 #13): over
 * it the leaf hears its organization's account JWT updates as the gateway pushes them to the hub,
 * so a node revoked there is cut off by the leaf itself, within a second. It may hear nothing else
 * and publish nothing (the leaf's answers to the updates stay on the leaf). Same key and expiry as
 * the site's own credentials (a site has one key).
 */
export function siteSystemLinkUserJwt(secrets: TenancySecrets, site: SiteIdentity): Promise<string> {
  if (!secrets.systemSigningSeed)
    throw new Error(
      "the tenancy secrets have no system signing key (run the stack bootstrap to upgrade them)",
    );
  return encodeUser(
    `site-${site.siteId}-system`,
    site.publicKey,
    secrets.system.publicKey,
    {
      // Publishes only its organization's nodes' DISCONNECT events (the gateway marks them
      // offline within seconds); a site cannot speak for another organization's account.
      pub: { allow: [accountDisconnectEvents(site.accountPublicKey)], deny: [] },
      sub: { allow: [accountClaimsUpdate(site.accountPublicKey)], deny: [] },
      allowed_connection_types: ["LEAFNODE"],
      subs: 16,
      payload: -1,
      data: -1,
    },
    {
      algorithm: Algorithms.v2,
      signer: keyPairFromSeed(secrets.systemSigningSeed),
      exp: Math.floor(site.expiresAt.getTime() / 1000),
    },
  );
}

/**
 * Inbox prefix of the gateway's seeder of one site's cache: that site's leaf answers here. One
 * prefix per site, so a site's leaf can answer only its own site's seeder, never forge another
 * site's JetStream replies (bundles issued before carried `_INBOX.efsc.>`, which still covers it).
 */
export function siteCacheSeederInbox(siteId: string): string {
  return `_INBOX.efsc.${siteId}`;
}

export interface SiteCacheSeederIdentity {
  siteId: string;
  publicKey: string;
  accountPublicKey: string;
  expiresAt: Date;
}

/**
 * Short-lived credentials with which the gateway fills one site's artifact cache: a user of the
 * organization's account on the hub that may only manage JetStream in that site's leaf domain and
 * publish that site's chunk subjects. Its inbox prefix is siteCacheSeederInbox(siteId).
 */
export function siteCacheSeederUserJwt(
  secrets: TenancySecrets,
  seeder: SiteCacheSeederIdentity,
): Promise<string> {
  return encodeUser(
    `site-cache-${seeder.siteId}`,
    seeder.publicKey,
    seeder.accountPublicKey,
    {
      pub: {
        allow: [`$JS.${siteCacheDomain(seeder.siteId)}.API.>`, siteCacheSeedSubjects(seeder.siteId)],
        deny: [],
      },
      sub: { allow: [`${siteCacheSeederInbox(seeder.siteId)}.>`], deny: [] },
      subs: 16,
      payload: -1,
      data: -1,
    },
    {
      algorithm: Algorithms.v2,
      signer: keyPairFromSeed(secrets.tenantSigningSeed),
      exp: Math.floor(seeder.expiresAt.getTime() / 1000),
    },
  );
}
