// Subject patterns that credentials are scoped to. The message-level protocol (what flows on
// these subjects) lives in @edgefleet/agent-sdk's protocol module; docs/protocol.md is the map.

/** What a node's own credentials may publish: its uplink, nothing else. */
export const nodeUplink = (wid: string) => `ef.up.${wid}.>`;
/** Where a node receives desired-state deltas. */
export const nodeDownlink = (wid: string) => `ef.down.${wid}`;
/** The node's private inbox prefix (replies to its requests land only here). */
export const nodeInboxPrefix = (wid: string) => `_INBOX.${wid}`;

/** Platform-side subjects of one organization (what the gateway sees). */
export const platformUplink = (orgWid: string) => `ef.t.${orgWid}.up.>`;
export const platformDownlink = (orgWid: string) => `ef.t.${orgWid}.down.>`;

export const enrollSubject = "ef.enroll";

/** Where the hub hears (and a site leaf's system link receives) one account's JWT updates. */
export const accountClaimsUpdate = (accountPublicKey: string) =>
  `$SYS.REQ.ACCOUNT.${accountPublicKey}.CLAIMS.UPDATE`;
