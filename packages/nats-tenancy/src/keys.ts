import { fmtCreds } from "@nats-io/jwt";
import { fromSeed, type KeyPair } from "@nats-io/nkeys";

/** Seeds travel as strings (JSON files, env); nkeys wants bytes. */
export function keyPairFromSeed(seed: string): KeyPair {
  return fromSeed(new TextEncoder().encode(seed));
}

export function seedOf(keyPair: KeyPair): string {
  return new TextDecoder().decode(keyPair.getSeed());
}

/** The standard `.creds` file text (JWT + seed) that every NATS client library reads. */
export function formatCreds(userJwt: string, userKeyPair: KeyPair): string {
  return new TextDecoder().decode(fmtCreds(userJwt, userKeyPair));
}
