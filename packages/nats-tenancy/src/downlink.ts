import { createHmac } from "node:crypto";
import { isSiteToken, isWireId, type NodeAddress } from "@edgefleet/agent-sdk/protocol";
import type { TenancySecrets } from "./bootstrap";

/**
 * A node's downlink token (issue 8 #12): the last token of `ef.down.<site>.<wid>.<token>`, 128 bits
 * of HMAC-SHA-256 keyed by the tenancy's tenant signing seed (which only gateways hold) over the
 * organization, site and node. It is written into the node's own JWT (its one subscribe
 * permission on a downlink), so the node learns it with its credentials, while no other node can
 * name it: a node cannot point a reply (a Hello's, a JetStream PubAck) at another node's downlink.
 * Derived, not stored: every gateway replica computes the same token, and a node moved to another
 * site gets another.
 */
export function downlinkToken(
  secrets: Pick<TenancySecrets, "tenantSigningSeed">,
  node: { org: string; site: string; wid: string },
): string {
  if (!isWireId(node.org) || !isWireId(node.wid) || !isSiteToken(node.site))
    throw new Error(`invalid node ${JSON.stringify(node)} for a downlink token`);
  return createHmac("sha256", secrets.tenantSigningSeed)
    .update(`edgefleet downlink v1\n${node.org}\n${node.site}\n${node.wid}`)
    .digest()
    .subarray(0, 16)
    .toString("base64url");
}

/** A node's layout-2 address in its organization and site (what its credentials will name). */
export function nodeAddress(
  secrets: Pick<TenancySecrets, "tenantSigningSeed">,
  node: { org: string; site: string; wid: string },
): NodeAddress {
  return { wid: node.wid, site: node.site, down: downlinkToken(secrets, node) };
}
