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

export type Intake<T extends MessageType> = { node: EdgeNode; msg: MessageOf<T> } | null;

/**
 * The checks every up message passes, in order: subject shape, payload (size, MessagePack,
 * version, schema), and a known, non-revoked node of the subject's organization. Identity comes
 * only from the subject. null = rejected (counted and logged); the caller just drops or terms it.
 */
export async function intakeUpMessage<T extends MessageType>(
  deps: IntakeDeps,
  subject: string,
  data: Uint8Array,
  upType: UpType,
  messageType: T,
): Promise<Intake<T>> {
  const parsed = parsePlatformUpSubject(subject);
  if (!parsed || parsed.type !== upType) {
    deps.rejections.reject(upType, "bad_subject", `subject is not ef.t.<org>.up.<wid>.${upType}`, subject);
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
  return { node, msg: decoded.msg };
}
