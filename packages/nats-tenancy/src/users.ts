import { Algorithms, encodeUser } from "@nats-io/jwt";
import type { TenancySecrets } from "./bootstrap";
import { keyPairFromSeed } from "./keys";
import { accountClaimsUpdate, nodeDownlink, nodeInboxPrefix, nodeUplink } from "./subjects";

export interface NodeIdentity {
  nodeId: string;
  /** Short wire id used in the node's subjects. */
  wid: string;
  /** The node's own `U…` public nkey: the private half never leaves the node. */
  publicKey: string;
  accountPublicKey: string;
}

/**
 * A node's user JWT: it may publish only on its own uplink and hear only its own downlink
 * and inbox, so no payload field can ever make it speak for another node.
 */
export function nodeUserJwt(secrets: TenancySecrets, node: NodeIdentity): Promise<string> {
  return encodeUser(
    node.nodeId,
    node.publicKey,
    node.accountPublicKey,
    {
      pub: { allow: [nodeUplink(node.wid)], deny: [] },
      sub: { allow: [nodeDownlink(node.wid), `${nodeInboxPrefix(node.wid)}.>`], deny: [] },
      subs: 16,
      payload: -1,
      data: -1,
    },
    { algorithm: Algorithms.v2, signer: keyPairFromSeed(secrets.tenantSigningSeed) },
  );
}

export interface SiteIdentity {
  siteId: string;
  publicKey: string;
  accountPublicKey: string;
  /** When the credentials stop working (the JWT's `exp`): a leaf must be re-issued its bundle before. */
  expiresAt: Date;
}

/**
 * The credentials a site's leaf node uses towards the hub. The leaf enforces each node's own
 * permissions locally (it runs in operator mode too); towards the hub the site may carry any
 * of its organization's node subjects, and nothing outside its organization's account.
 */
export function siteLeafUserJwt(secrets: TenancySecrets, site: SiteIdentity): Promise<string> {
  return encodeUser(
    `site-${site.siteId}`,
    site.publicKey,
    site.accountPublicKey,
    {
      pub: { allow: ["ef.up.>"], deny: [] },
      sub: { allow: ["ef.down.>", "_INBOX.>"], deny: [] },
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
      pub: { allow: [], deny: [">"] },
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
