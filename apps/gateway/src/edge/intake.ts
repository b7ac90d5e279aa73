import {
  decodeMessage,
  type MessageOf,
  type MessageType,
  parsePlatformUpSubject,
  type UpType,
} from "@edgefleet/agent-sdk/protocol";
import type { EdgeNode, NodeDirectory } from "./node-directory.js";
import type { Rejections } from "./rejections.js";

export interface IntakeDeps {
  directory: NodeDirectory;
  rejections: Rejections;
}

/**
 * How the subject's site stands to the node (docs/protocol.md "Credentials"):
 * - `current`: the node's current site;
 * - `moved`: a site the node was moved away from (`node.former_sites`), whose credentials it may
 *   still hold: only reports stored before it left, and, until the node says Hello on its current
 *   site, a Hello (answered with credentials for the current one) are taken;
 * - `layout1`: no site at all (credentials from before site scoping): taken as before, the node
 *   gets layout-2 credentials at its Hello. Whoever holds a layout-2 site's leaf credentials can
 *   never publish these (a site token starts with `_`, a wire id never does).
 */
export type SubjectStanding = "current" | "moved" | "layout1";

export type Intake<T extends MessageType> = {
  node: EdgeNode;
  msg: MessageOf<T>;
  standing: SubjectStanding;
} | null;

export interface IntakeOptions {
  /**
   * Hello: a node on a site it was moved away from is answered (with credentials for its new one)
   * until it says Hello on its current site.
   */
  acceptMoved?: boolean;
  /**
   * EF_UP: when the stream stored the message (ms). One stored under a site the node was moved
   * away from, before it left, is its own (in flight at the move).
   */
  storedAt?: number;
}

/**
 * The checks every up message passes, in order: subject shape, payload (size, MessagePack,
 * version, schema), a known, non-revoked node of the subject's organization, and the subject's site
 * against the node's (issue 8 #2: a site's leaf credentials reach only its own nodes' subjects, and
 * the gateway takes a node's messages only on its own site's). Identity comes only from the subject.
 * null = rejected (counted and logged); the caller just drops or terms it.
 */
export async function intakeUpMessage<T extends MessageType>(
  deps: IntakeDeps,
  subject: string,
  data: Uint8Array,
  upType: UpType,
  messageType: T,
  options: IntakeOptions = {},
): Promise<Intake<T>> {
  const parsed = parsePlatformUpSubject(subject);
  if (!parsed || parsed.type !== upType) {
    deps.rejections.reject(
      upType,
      "bad_subject",
      `subject is not ef.t.<org>.up.<site>.<wid>.${upType}`,
      subject,
    );
    return null;
  }
  const decoded = decodeMessage(messageType, data);
  if (!decoded.ok) {
    deps.rejections.reject(upType, decoded.reason, decoded.detail, subject);
    return null;
  }
  const node = await deps.directory.resolve(parsed.org, parsed.wid);
  if (!node) {
    deps.rejections.reject(upType, "unknown_node", "no node with this wire id in this organization", subject);
    return null;
  }
  if (node.revoked) {
    deps.rejections.reject(upType, "revoked", "node credentials are revoked", subject);
    return null;
  }
  const standing = subjectStanding(node, parsed.site);
  const leftAt = parsed.site === null ? undefined : node.formerSites[parsed.site];
  const taken =
    standing === "current" ||
    standing === "layout1" ||
    (standing === "moved" &&
      ((options.acceptMoved === true && node.subjectSite !== node.site) ||
        (options.storedAt !== undefined && leftAt !== undefined && options.storedAt < leftAt)));
  if (!taken) {
    deps.rejections.reject(
      upType,
      "wrong_site",
      standing === "moved"
        ? `the node was moved from site ${parsed.site} to ${node.site}`
        : `the node is at site ${node.site}, not ${parsed.site}`,
      subject,
    );
    return null;
  }
  return { node, msg: decoded.msg, standing };
}

/** How the site token of a subject (null: layout 1) stands to the node; null: not its site at all. */
export function subjectStanding(node: EdgeNode, site: string | null): SubjectStanding | null {
  if (site === null) return "layout1";
  if (site === node.site) return "current";
  if (Object.hasOwn(node.formerSites, site)) return "moved";
  return null;
}
