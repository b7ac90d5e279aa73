/**
 * Subjects of the edge protocol (docs/protocol.md "Subjects"). The agent sees its tenant account's
 * local names (`ef.up.<site>.<wid>.<type>`); the gateway sees the platform account's
 * (`ef.t.<org>.up.<site>.<wid>.<type>`). Identity comes from the subject the server let through, so
 * the gateway must parse subjects here and never trust a payload field for who sent a message.
 *
 * Subject layout 2 (issue 8, #2 and #12): every node subject names the node's site, so a site's
 * leaf credentials reach only that site's nodes, and a node's downlink ends in a token only the
 * gateway can derive, so no other node can name it. A node's address (site, wid, downlink token)
 * is read from its own user JWT's permissions: the credentials are the one source of truth.
 * Layout 1 (before issue 8: `ef.up.<wid>.<type>`, `ef.down.<wid>`, `_INBOX.<wid>`) is what nodes
 * enrolled earlier still hold; they speak it until their first Hello gives them layout-2 ones.
 */

/** Wire ids (node `wid`, organization `org`): short lowercase base-36, a single subject token. */
export const WIRE_ID_PATTERN = /^[0-9a-z]{1,20}$/;

/**
 * A site's token in subjects: `_` + the site's wire id in base 36, or `_` alone for a node without
 * a site. It starts with `_`, which no wire id does, so no layout-2 site subject can ever match a
 * layout-1 node subject (a site user's `ef.up._3.>` never covers the old `ef.up.<wid>.…`).
 */
export const SITE_TOKEN_PATTERN = /^_[0-9a-z]{0,20}$/;
/** The site token of a node without a site (it connects to the hub, never through a leaf). */
export const NO_SITE_TOKEN = "_";

/** A node's downlink token: 128 bits, base64url (22 chars), derived by the gateway from a secret. */
export const DOWNLINK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{22}$/;

/**
 * `art`: artifact chunk requests (request/reply, queue group `gateway`), see artifacts.ts.
 * `cmd`: replies to commands (core publish, heard by every gateway replica), see commands.ts.
 * `prb`: a hub probe's chunks (request/reply, answered by the gateway replica that asked).
 * `sink`: a leaf probe's chunks: nobody subscribes, so the leaf server drops them (never on the
 *   hub's interest: no gateway subscription may cover it).
 */
export const UP_TYPES = ["hello", "hb", "st", "mx", "ack", "art", "cmd", "prb", "sink"] as const;
export type UpType = (typeof UP_TYPES)[number];

/** Up messages that go through JetStream (stream `EF_UP`), buffered at the edge while offline. */
export const DURABLE_UP_TYPES = ["st", "mx", "ack"] as const satisfies readonly UpType[];
export type DurableUpType = (typeof DURABLE_UP_TYPES)[number];

export const ENROLL_SUBJECT = "ef.enroll";
/** Queue group of all gateway replicas on hello/hb/art (one replica handles each message). */
export const GATEWAY_QUEUE_GROUP = "gateway";
export const EF_UP_STREAM = "EF_UP";

export function isWireId(value: string): boolean {
  return WIRE_ID_PATTERN.test(value);
}

export function isSiteToken(value: string): boolean {
  return SITE_TOKEN_PATTERN.test(value);
}

/** Renders a database wire id (a bigint sequence) as its subject token. */
export function formatWireId(id: bigint): string {
  return id.toString(36);
}

/** Parses a subject token back into the database wire id; null if it is not one. */
export function parseWireId(token: string): bigint | null {
  if (!isWireId(token)) return null;
  let value = 0n;
  for (const char of token) value = value * 36n + BigInt(Number.parseInt(char, 36));
  return value;
}

/** The site token of a site's wire id (null: no site). */
export function siteToken(siteWireId: bigint | null): string {
  return siteWireId === null ? NO_SITE_TOKEN : `_${formatWireId(siteWireId)}`;
}

/** A site token's wire id: null for `_` (no site), undefined when it is not a site token. */
export function parseSiteToken(token: string): bigint | null | undefined {
  if (!isSiteToken(token)) return undefined;
  return token === NO_SITE_TOKEN ? null : (parseWireId(token.slice(1)) ?? undefined);
}

/**
 * Where a node is on the wire: the subjects its credentials allow. `site` and `down` are null in
 * layout 1 (credentials issued before subjects named the site).
 */
export interface NodeAddress {
  wid: string;
  /** Site token (`_<site wire id>`, or `_` without a site); null: layout 1. */
  site: string | null;
  /** Downlink token; null: layout 1 (the downlink is `ef.down.<wid>`). */
  down: string | null;
}

function assertWireId(kind: string, value: string): void {
  if (!isWireId(value))
    throw new Error(`invalid ${kind} wire id ${JSON.stringify(value)}: want [0-9a-z]{1,20}`);
}

function assertAddress(address: NodeAddress): void {
  assertWireId("node", address.wid);
  if ((address.site === null) !== (address.down === null))
    throw new Error("a node address has both a site and a downlink token, or neither (layout 1)");
  if (address.site !== null && !isSiteToken(address.site))
    throw new Error(`invalid site token ${JSON.stringify(address.site)}: want _ or _[0-9a-z]{1,20}`);
  if (address.down !== null && !DOWNLINK_TOKEN_PATTERN.test(address.down))
    throw new Error(`invalid downlink token ${JSON.stringify(address.down)}: want 22 base64url chars`);
}

function isUpType(value: string): value is UpType {
  return (UP_TYPES as readonly string[]).includes(value);
}

/** The node's own tokens after `ef.up.` (and after `ef.t.<org>.up.` on the platform side). */
function nodeTokens(address: NodeAddress): string {
  assertAddress(address);
  return address.site === null ? address.wid : `${address.site}.${address.wid}`;
}

/** Agent's view: `ef.up.<site>.<wid>.<type>` (layout 1: `ef.up.<wid>.<type>`). */
export function agentUpSubject(address: NodeAddress, type: UpType): string {
  return `ef.up.${nodeTokens(address)}.${type}`;
}

/** Every up subject of a node: `ef.up.<site>.<wid>.>` (its user JWT's one uplink permission). */
export function agentUplinkWildcard(address: NodeAddress): string {
  return `ef.up.${nodeTokens(address)}.>`;
}

/**
 * Agent's view of its downlink: `ef.down.<site>.<wid>.<token>` (layout 1: `ef.down.<wid>`).
 * DesiredDelta, CommandRequest and CredentialsUpdate: `downlinkMessageType`.
 */
export function agentDownSubject(address: NodeAddress): string {
  const tokens = nodeTokens(address);
  return address.down === null ? `ef.down.${tokens}` : `ef.down.${tokens}.${address.down}`;
}

/**
 * Inbox prefix of a node's connection: `_INBOX.<site>.<wid>` (layout 1: `_INBOX.<wid>`). Its user may
 * subscribe only below it, and its site's leaf user only below `_INBOX.<site>`.
 */
export function nodeInboxPrefix(address: NodeAddress): string {
  return `_INBOX.${nodeTokens(address)}`;
}

/** Platform's view: `ef.t.<org>.up.<site>.<wid>.<type>` (layout 1: `ef.t.<org>.up.<wid>.<type>`). */
export function platformUpSubject(org: string, address: NodeAddress, type: UpType): string {
  assertWireId("organization", org);
  return `ef.t.${org}.up.${nodeTokens(address)}.${type}`;
}

/** Platform's view of a node's downlink: `ef.t.<org>.down.<site>.<wid>.<token>` (layout 1: `…down.<wid>`). */
export function platformDownSubject(org: string, address: NodeAddress): string {
  assertWireId("organization", org);
  const tokens = nodeTokens(address);
  return address.down === null ? `ef.t.${org}.down.${tokens}` : `ef.t.${org}.down.${tokens}.${address.down}`;
}

/**
 * Platform wildcards the gateway subscribes to for one up type of every node of every org: the
 * layout-2 subjects, and the layout-1 ones that nodes enrolled earlier use until they migrate.
 */
export function platformUpWildcards(type: UpType): [layout2: string, layout1: string] {
  return [`ef.t.*.up.*.*.${type}`, `ef.t.*.up.*.${type}`];
}

export interface PlatformUpSubject {
  org: string;
  /** The subject's site token; null for a layout-1 subject (no site). */
  site: string | null;
  wid: string;
  type: UpType;
}

/**
 * Parses `ef.t.<org>.up.<site>.<wid>.<type>` (or layout 1's `ef.t.<org>.up.<wid>.<type>`); null for
 * anything else (wrong shape, bad ids, unknown type).
 */
export function parsePlatformUpSubject(subject: string): PlatformUpSubject | null {
  const parts = subject.split(".");
  if (parts.length !== 6 && parts.length !== 7) return null;
  const [ef, t, org, up] = parts as [string, string, string, string];
  if (ef !== "ef" || t !== "t" || up !== "up" || !isWireId(org)) return null;
  const node = parseNodeTokens(parts.slice(4));
  return node ? { org, ...node } : null;
}

/** Parses `ef.up.<site>.<wid>.<type>` (or `ef.up.<wid>.<type>`); null for anything else. */
export function parseAgentUpSubject(
  subject: string,
): { site: string | null; wid: string; type: UpType } | null {
  const parts = subject.split(".");
  if (parts.length !== 4 && parts.length !== 5) return null;
  if (parts[0] !== "ef" || parts[1] !== "up") return null;
  return parseNodeTokens(parts.slice(2));
}

function parseNodeTokens(tokens: string[]): { site: string | null; wid: string; type: UpType } | null {
  const type = tokens.at(-1) ?? "";
  const wid = tokens.at(-2) ?? "";
  const site = tokens.length === 3 ? (tokens[0] as string) : null;
  if (!isUpType(type) || !isWireId(wid)) return null;
  if (site !== null && !isSiteToken(site)) return null;
  return { site, wid, type };
}

/**
 * The address a node user JWT's permissions name: the publish permission `ef.up.<site>.<wid>.>`
 * (layout 1: `ef.up.<wid>.>`) and, in layout 2, the subscribe permission
 * `ef.down.<site>.<wid>.<token>`. Null when the JWT names no node uplink. The signature is not
 * checked here: the server checks it, this only reads what the credentials allow.
 */
export function nodeAddressFromJwt(jwt: string): NodeAddress | null {
  const permissions = jwtPermissions(jwt);
  if (!permissions) return null;
  for (const subject of permissions.pub) {
    const tokens = subject.split(".");
    if (tokens[0] !== "ef" || tokens[1] !== "up" || tokens.at(-1) !== ">") continue;
    if (tokens.length === 4 && isWireId(tokens[2] as string))
      return { wid: tokens[2] as string, site: null, down: null };
    if (tokens.length !== 5) continue;
    const [, , site, wid] = tokens as [string, string, string, string];
    if (!isSiteToken(site) || !isWireId(wid)) continue;
    const downPrefix = `ef.down.${site}.${wid}.`;
    const down = permissions.sub.find((allowed) => allowed.startsWith(downPrefix))?.slice(downPrefix.length);
    if (down === undefined || !DOWNLINK_TOKEN_PATTERN.test(down)) return null;
    return { wid, site, down };
  }
  return null;
}

function jwtPermissions(jwt: string): { pub: string[]; sub: string[] } | null {
  const payload = jwt.split(".")[1];
  if (jwt.split(".").length !== 3 || !payload) return null;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  const nats = (claims as { nats?: { pub?: { allow?: unknown }; sub?: { allow?: unknown } } } | null)?.nats;
  const strings = (value: unknown) =>
    Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
  return nats ? { pub: strings(nats.pub?.allow), sub: strings(nats.sub?.allow) } : null;
}
