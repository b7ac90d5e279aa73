import { createPublicKey, verify as ed25519Verify } from "node:crypto";
import { createCurve, type KeyPair, Prefix } from "@nats-io/nkeys";
// Not re-exported by the package root (see nkeys/native.ts for the same pinned import).
import { Codec } from "@nats-io/nkeys/lib/codec.js";
import { sealToCurveKey } from "../nkeys/native-seal.js";
import { type DecodeResult, decodeMessage, encodeMessage } from "./codec.js";
import { type EnrollReply, type EnrollReplyBody, PROTOCOL_VERSION } from "./messages.js";

/**
 * Enrollment over the shared, public ENROLL credentials (issue 8, #3 and #12). Two things make it
 * safe although every holder of those credentials can read every reply inbox of the account:
 *
 * - **Proof of possession**: the request carries the node's Ed25519 signature of
 *   `enrollProofPayload(tok, xk)` made with the key it asks credentials for, so nobody can enroll
 *   (or probe) a public key whose seed they do not hold.
 * - **Sealed reply**: the request names a one-time X25519 curve key (`xk`); the gateway seals the
 *   EnrollReplyBody to it with a one-time curve key of its own (nkeys `seal`: XSalsa20-Poly1305),
 *   so a bystander sees only ciphertext.
 */

const encoder = new TextEncoder();
/** DER header of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows. */
const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** The bytes a node signs to prove it holds the key it enrolls (domain-separated, versioned). */
export function enrollProofPayload(token: string, curveKey: string): Uint8Array {
  return encoder.encode(`edgefleet-enroll-v1\n${token}\n${curveKey}`);
}

/** The `sig` field: the node key's signature of the proof payload, base64url. */
export function signEnrollProof(nodeKey: KeyPair, token: string, curveKey: string): string {
  return Buffer.from(nodeKey.sign(enrollProofPayload(token, curveKey))).toString("base64url");
}

/** True when `sig` is `publicKey`'s signature of the proof payload (native Ed25519). */
export function verifyEnrollProof(request: { tok: string; key: string; xk: string; sig: string }): boolean {
  try {
    const raw = Codec.decode(Prefix.User, encoder.encode(request.key));
    const publicKey = createPublicKey({
      key: Buffer.concat([SPKI_ED25519_PREFIX, Buffer.from(raw)]),
      format: "der",
      type: "spki",
    });
    return ed25519Verify(
      null,
      enrollProofPayload(request.tok, request.xk),
      publicKey,
      Buffer.from(request.sig, "base64url"),
    );
  } catch {
    return false;
  }
}

/** The wire reply: `body` sealed to the requester's curve key with a fresh one-time key. */
export function sealEnrollReply(body: EnrollReplyBody, requesterCurveKey: string): EnrollReply {
  const { sealed, senderPublicKey } = sealToCurveKey(
    encodeMessage("enrollReplyBody", body),
    requesterCurveKey,
  );
  return { v: PROTOCOL_VERSION, xk: senderPublicKey, box: Buffer.from(sealed).toString("base64url") };
}

/**
 * The body of a wire reply, opened with the requester's curve key pair. A plain `rejected` reply
 * (to a malformed request) is passed through; a box that does not open is `invalid`.
 */
export function openEnrollReply(
  reply: EnrollReply,
  requesterCurve: KeyPair,
): DecodeResult<"enrollReplyBody"> {
  if ("st" in reply) return { ok: true, msg: { v: reply.v, st: reply.st, err: reply.err } };
  const opened = requesterCurve.open(Buffer.from(reply.box, "base64url"), reply.xk);
  if (!opened) return { ok: false, reason: "invalid", detail: "the sealed reply does not open with our key" };
  return decodeMessage("enrollReplyBody", opened);
}

/** A one-time curve key pair for one enrollment request. */
export function createEnrollCurve(): KeyPair {
  return createCurve();
}
