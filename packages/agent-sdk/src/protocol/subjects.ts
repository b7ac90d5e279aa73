/**
 * Subjects of the edge protocol (docs/protocol.md). The agent sees its tenant account's local names
 * (`ef.up.<wid>.<type>`); the gateway sees the platform account's (`ef.t.<org>.up.<wid>.<type>`).
 * Identity comes from the subject the server let through, so the gateway must parse subjects here
 * and never trust a payload field for who sent a message.
 */

/** Wire ids (node `wid`, organization `org`): short lowercase base-36, a single subject token. */
export const WIRE_ID_PATTERN = /^[0-9a-z]{1,20}$/;

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

function assertWireId(kind: string, value: string): void {
  if (!isWireId(value))
    throw new Error(`invalid ${kind} wire id ${JSON.stringify(value)}: want [0-9a-z]{1,20}`);
}

function isUpType(value: string): value is UpType {
  return (UP_TYPES as readonly string[]).includes(value);
}

/** Agent's view: `ef.up.<wid>.<type>`. */
export function agentUpSubject(wid: string, type: UpType): string {
  assertWireId("node", wid);
  return `ef.up.${wid}.${type}`;
}

/** Agent's view: `ef.down.<wid>` (DesiredDelta and CommandRequest: `downlinkMessageType`). */
export function agentDownSubject(wid: string): string {
  assertWireId("node", wid);
  return `ef.down.${wid}`;
}

/** Platform's view: `ef.t.<org>.up.<wid>.<type>`. */
export function platformUpSubject(org: string, wid: string, type: UpType): string {
  assertWireId("organization", org);
  assertWireId("node", wid);
  return `ef.t.${org}.up.${wid}.${type}`;
}

/** Platform's view: `ef.t.<org>.down.<wid>`. */
export function platformDownSubject(org: string, wid: string): string {
  assertWireId("organization", org);
  assertWireId("node", wid);
  return `ef.t.${org}.down.${wid}`;
}

/** Platform wildcard the gateway subscribes to for one up type of every node of every org. */
export function platformUpWildcard(type: UpType): string {
  return `ef.t.*.up.*.${type}`;
}

/** Inbox prefix of a node's connection: its user may subscribe only under `_INBOX.<wid>.>` (a whole token, so a leaf's site user can allow `_INBOX.>`). */
export function nodeInboxPrefix(wid: string): string {
  assertWireId("node", wid);
  return `_INBOX.${wid}`;
}

export interface PlatformUpSubject {
  org: string;
  wid: string;
  type: UpType;
}

/** Parses `ef.t.<org>.up.<wid>.<type>`; null for anything else (wrong shape, bad ids, unknown type). */
export function parsePlatformUpSubject(subject: string): PlatformUpSubject | null {
  const parts = subject.split(".");
  if (parts.length !== 6) return null;
  const [ef, t, org, up, wid, type] = parts as [string, string, string, string, string, string];
  if (ef !== "ef" || t !== "t" || up !== "up") return null;
  if (!isWireId(org) || !isWireId(wid) || !isUpType(type)) return null;
  return { org, wid, type };
}

/** Parses `ef.up.<wid>.<type>`; null for anything else. */
export function parseAgentUpSubject(subject: string): { wid: string; type: UpType } | null {
  const parts = subject.split(".");
  if (parts.length !== 4) return null;
  const [ef, up, wid, type] = parts as [string, string, string, string];
  if (ef !== "ef" || up !== "up" || !isWireId(wid) || !isUpType(type)) return null;
  return { wid, type };
}
