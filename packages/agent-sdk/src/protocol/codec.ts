import { decode, encode } from "@msgpack/msgpack";
import {
  MESSAGE_SIZE_LIMITS,
  type MessageOf,
  type MessageType,
  messageSchemas,
  PROTOCOL_VERSION,
} from "./messages.js";

export type DecodeFailureReason = "too_large" | "not_msgpack" | "unknown_version" | "invalid";

export type DecodeResult<T extends MessageType> =
  | { ok: true; msg: MessageOf<T> }
  | { ok: false; reason: DecodeFailureReason; detail: string };

/** Thrown by encodeMessage: a sender bug (its own message is invalid or too big), not bad input. */
export class ProtocolEncodeError extends Error {
  override name = "ProtocolEncodeError";
}

/**
 * Validates and encodes one message. The schema fixes the key order, so equal messages always
 * encode to the same bytes (the test vectors rely on it).
 */
export function encodeMessage<T extends MessageType>(type: T, msg: MessageOf<T>): Uint8Array {
  const parsed = messageSchemas[type].safeParse(msg);
  if (!parsed.success) {
    throw new ProtocolEncodeError(`cannot encode ${type}: ${summarizeIssues(parsed.error.issues)}`);
  }
  const bytes = encode(parsed.data, { ignoreUndefined: true });
  const limit = MESSAGE_SIZE_LIMITS[type];
  if (bytes.byteLength > limit) {
    throw new ProtocolEncodeError(
      `cannot encode ${type}: ${bytes.byteLength} bytes exceeds the ${limit}-byte limit`,
    );
  }
  return bytes;
}

/**
 * What a payload on a node's downlink is: a CommandRequest (a map with a `cmd` key), a
 * CredentialsUpdate (a map with a `jwt` key), or a DesiredDelta (anything else, whose decoding
 * then says what is wrong with it). One subject for all keeps a node at its two subscriptions
 * (downlink and inbox). Only a payload within the two smaller types' limit is looked into.
 */
export function downlinkMessageType(
  bytes: Uint8Array,
): "commandRequest" | "credentialsUpdate" | "desiredDelta" {
  const limit = Math.max(MESSAGE_SIZE_LIMITS.commandRequest, MESSAGE_SIZE_LIMITS.credentialsUpdate);
  if (bytes.byteLength > limit) return "desiredDelta";
  try {
    const value = decode(bytes, {
      maxStrLength: limit,
      maxBinLength: 512,
      maxArrayLength: 64,
      maxMapLength: 64,
    });
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      if ("cmd" in value) return "commandRequest";
      if ("jwt" in value) return "credentialsUpdate";
    }
  } catch {
    // Not MessagePack: the delta decoder reports it.
  }
  return "desiredDelta";
}

/** Decodes and validates one received payload. Never throws: bad input is a result, not a crash. */
export function decodeMessage<T extends MessageType>(type: T, bytes: Uint8Array): DecodeResult<T> {
  const limit = MESSAGE_SIZE_LIMITS[type];
  if (bytes.byteLength > limit) {
    return {
      ok: false,
      reason: "too_large",
      detail: `${bytes.byteLength} bytes exceeds the ${limit}-byte limit`,
    };
  }
  let value: unknown;
  try {
    // Limits bound the work a hostile payload can cause even below the byte limit.
    value = decode(bytes, {
      maxStrLength: limit,
      maxBinLength: limit,
      maxArrayLength: 4096,
      maxMapLength: 4096,
    });
  } catch (error) {
    return {
      ok: false,
      reason: "not_msgpack",
      detail: error instanceof Error ? error.message : String(error),
    };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value) || value instanceof Uint8Array) {
    return { ok: false, reason: "invalid", detail: `${type} must be a map, got ${describe(value)}` };
  }
  const v = (value as { v?: unknown }).v;
  if (v === undefined) return { ok: false, reason: "invalid", detail: "missing protocol version v" };
  if (v !== PROTOCOL_VERSION) {
    return {
      ok: false,
      reason: "unknown_version",
      detail: `protocol version ${JSON.stringify(v)} is not supported`,
    };
  }
  const parsed = messageSchemas[type].safeParse(value);
  if (!parsed.success) return { ok: false, reason: "invalid", detail: summarizeIssues(parsed.error.issues) };
  return { ok: true, msg: parsed.data as MessageOf<T> };
}

function summarizeIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues
    .slice(0, 3)
    .map(
      (issue) => `${issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)"}: ${issue.message}`,
    )
    .join("; ");
}

function describe(value: unknown): string {
  if (value === null) return "nil";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Uint8Array) return "binary";
  return typeof value;
}
