import { createPrivateKey, createPublicKey, sign as ed25519Sign } from "node:crypto";
import { encode, fromSeed, type KeyPair, Prefix } from "@nats-io/nkeys";
// Not re-exported by the package root; pinned version, and the tests compare our signatures
// with the library's own.
import { Codec } from "@nats-io/nkeys/lib/codec.js";
import type { Authenticator } from "@nats-io/transport-node";

// nkeys signs with tweetnacl, pure JavaScript: ~10 ms per Ed25519 signature on these machines.
// Every NATS connect signs the server's nonce and every minted JWT is signed, so a process that
// connects thousands of hollow agents (or a gateway minting node credentials) spends seconds of
// CPU per second on it, and the server drops connects with "Authentication Timeout". Node's
// native Ed25519 gives byte-identical signatures (Ed25519 is deterministic) in ~0.04 ms.

/** PKCS#8 DER header of an Ed25519 private key; the 32-byte seed follows it. */
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const textEncoder = new TextEncoder();

/**
 * An nkeys KeyPair whose `sign`, `getPublicKey` and `getPrivateKey` use Node's native Ed25519.
 * (nkeys also re-derives the key pair with a tweetnacl scalar multiplication, ~5 ms, on every
 * getPublicKey/getPrivateKey call; JWT encoding calls them several times per token.)
 */
export function nativeKeyPair(seed: Uint8Array | string): KeyPair {
  const seedBytes = typeof seed === "string" ? textEncoder.encode(seed) : seed;
  const keyPair = fromSeed(seedBytes);
  const { prefix, buf: rawSeed } = Codec.decodeSeed(seedBytes);
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, Buffer.from(rawSeed)]),
    format: "der",
    type: "pkcs8",
  });
  // The raw 32-byte public key is the tail of its SPKI DER encoding.
  const rawPublicKey = createPublicKey(privateKey).export({ format: "der", type: "spki" }).subarray(-32);
  const publicKey = new TextDecoder().decode(Codec.encode(prefix, rawPublicKey));
  const encodedPrivateKey = Codec.encode(Prefix.Private, Buffer.concat([Buffer.from(rawSeed), rawPublicKey]));
  keyPair.sign = (data: Uint8Array) => new Uint8Array(ed25519Sign(null, data, privateKey));
  keyPair.getPublicKey = () => publicKey;
  keyPair.getPrivateKey = () => encodedPrivateKey.slice();
  return keyPair;
}

/** Same answer as nats.js's `jwtAuthenticator(jwt, seed)`, signed natively. */
export function nativeJwtAuthenticator(jwt: string, seed: Uint8Array | string): Authenticator {
  const keyPair = nativeKeyPair(seed);
  const nkey = keyPair.getPublicKey();
  return (nonce?: string) => ({
    jwt,
    nkey,
    sig: nonce ? encode(keyPair.sign(textEncoder.encode(nonce))) : "",
  });
}

const CREDS_BLOCK = /\s*(?:(?:-{3,}[^\n]*-{3,}\n)(.+)(?:\n\s*-{3,}[^\n]*-{3,}\n))/gi;

/** Same as nats.js's `credsAuthenticator(creds)` (a `.creds` file's bytes), signed natively. */
export function nativeCredsAuthenticator(creds: Uint8Array | string): Authenticator {
  const text = typeof creds === "string" ? creds : new TextDecoder().decode(creds);
  const blocks = [...text.matchAll(CREDS_BLOCK)].map((match) => match[1]?.trim());
  const [jwt, seed] = blocks;
  if (!jwt || !seed) throw new Error("unable to parse credentials: want a JWT block and an NKEY SEED block");
  return nativeJwtAuthenticator(jwt, seed);
}
