// Subject patterns that credentials are scoped to. The message-level protocol (what flows on
// these subjects, and how a node's subjects are built) lives in @edgefleet/agent-sdk's protocol
// module; docs/protocol.md is the map.
import {
  agentDownSubject,
  agentUplinkWildcard,
  isSiteToken,
  type NodeAddress,
  nodeInboxPrefix,
} from "@edgefleet/agent-sdk/protocol";

/** What a node's own credentials may publish: its uplink (`ef.up.<site>.<wid>.>`), nothing else. */
export const nodeUplink = (address: NodeAddress) => agentUplinkWildcard(address);
/** Where a node receives deltas, commands and credentials: `ef.down.<site>.<wid>.<token>`. */
export const nodeDownlink = (address: NodeAddress) => agentDownSubject(address);
/** The node's private inbox (replies to its requests land only here). */
export const nodeInbox = (address: NodeAddress) => `${nodeInboxPrefix(address)}.>`;

/** `<root>.<site>.>`: the site's own nodes' subjects under one root. */
function siteWildcard(root: string, site: string): string {
  if (!isSiteToken(site)) throw new Error(`invalid site token ${JSON.stringify(site)}`);
  return `${root}.${site}.>`;
}
/** What a site's leaf may carry up: its own nodes' uplinks, no other site's. */
export const siteUplink = (site: string) => siteWildcard("ef.up", site);
/** What a site's leaf may hear: its own nodes' downlinks and inboxes. */
export const siteDownlink = (site: string) => siteWildcard("ef.down", site);
export const siteInbox = (site: string) => siteWildcard("_INBOX", site);

/** Platform-side subjects of one organization (what the gateway sees). */
export const platformUplink = (orgWid: string) => `ef.t.${orgWid}.up.>`;
export const platformDownlink = (orgWid: string) => `ef.t.${orgWid}.down.>`;

export const enrollSubject = "ef.enroll";

/** Where a server announces a closed client connection of one account (the system account's event). */
export const accountDisconnectEvents = (accountPublicKey: string) =>
  `$SYS.ACCOUNT.${accountPublicKey}.DISCONNECT`;

/** Where the hub hears (and a site leaf's system link receives) one account's JWT updates. */
export const accountClaimsUpdate = (accountPublicKey: string) =>
  `$SYS.REQ.ACCOUNT.${accountPublicKey}.CLAIMS.UPDATE`;
