import {
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
} from "node:crypto";
import { Prefix } from "@nats-io/nkeys";
// Not re-exported by the package root (see native.ts for the same pinned import).
import { Codec } from "@nats-io/nkeys/lib/codec.js";
import nacl from "tweetnacl";

// nkeys' curve `seal` is NaCl's box (X25519, then XSalsa20-Poly1305) in pure JavaScript: two
// X25519 scalar multiplications per sealed enrollment reply (the one-time key's public half and
// the shared secret), ~1.5 ms each, 12 % of the gateway's CPU while nodes enroll. Node's native
// X25519 does the multiplications; tweetnacl (nkeys' own dependency) still does HSalsa20 and the
// secretbox, so the bytes are exactly what nkeys' `seal` makes for the same key and nonce.

/** DER headers of an X25519 SubjectPublicKeyInfo and PKCS#8 private key; the raw 32 bytes follow. */
const SPKI_X25519_PREFIX = Buffer.from("302a300506032b656e032100", "hex");
const PKCS8_X25519_PREFIX = Buffer.from("302e020100300506032b656e04220420", "hex");
/** nkeys' sealed-message header ("xkv1"), then the 24-byte nonce, then the box. */
const XKEY_V1 = Buffer.from("xkv1");
const NONCE_BYTES = 24;
/** NaCl's crypto_box_beforenm: HSalsa20 of the X25519 secret with a zero nonce and this constant. */
const SIGMA = new Uint8Array(Buffer.from("expand 32-byte k"));
const ZERO_NONCE = new Uint8Array(16);
/** tweetnacl exports its low-level functions without declaring them in its types. */
const hsalsa20 = (nacl as unknown as NaclLowLevel).lowlevel.crypto_core_hsalsa20;
interface NaclLowLevel {
  lowlevel: {
    crypto_core_hsalsa20(out: Uint8Array, nonce: Uint8Array, key: Uint8Array, sigma: Uint8Array): number;
  };
}

export interface SealedMessage {
  /** header + nonce + box, as nkeys' CurveKP.seal returns it. */
  sealed: Uint8Array;
  /** The sender's public curve nkey ("X…"), which the recipient opens the box with. */
  senderPublicKey: string;
}

/**
 * Seals `message` to `recipient` (a public curve nkey) with a fresh one-time sender key, or with
 * `options.senderSeed` (the raw 32-byte curve seed; tests compare with nkeys) and `options.nonce`.
 */
export function sealToCurveKey(
  message: Uint8Array,
  recipient: string,
  options: { senderSeed?: Uint8Array; nonce?: Uint8Array } = {},
): SealedMessage {
  const sender = options.senderSeed
    ? privateKeyOf(options.senderSeed)
    : generateKeyPairSync("x25519").privateKey;
  const senderRaw = createPublicKey(sender).export({ format: "der", type: "spki" }).subarray(-32);
  const recipientRaw = Codec.decode(Prefix.Curve, new TextEncoder().encode(recipient));
  const recipientKey = createPublicKey({
    key: Buffer.concat([SPKI_X25519_PREFIX, Buffer.from(recipientRaw)]),
    format: "der",
    type: "spki",
  });
  const shared = new Uint8Array(diffieHellman({ privateKey: sender, publicKey: recipientKey }));
  const boxKey = new Uint8Array(32);
  hsalsa20(boxKey, ZERO_NONCE, shared, SIGMA);
  const nonce = options.nonce ?? new Uint8Array(randomBytes(NONCE_BYTES));
  const box = nacl.secretbox(message, nonce, boxKey);
  return {
    sealed: new Uint8Array(Buffer.concat([XKEY_V1, nonce, box])),
    senderPublicKey: new TextDecoder().decode(Codec.encode(Prefix.Curve, senderRaw)),
  };
}

function privateKeyOf(rawSeed: Uint8Array): KeyObject {
  return createPrivateKey({
    key: Buffer.concat([PKCS8_X25519_PREFIX, Buffer.from(rawSeed)]),
    format: "der",
    type: "pkcs8",
  });
}
