import { nativeKeyPair } from "@edgefleet/agent-sdk/native-nkeys";
import { fmtCreds } from "@nats-io/jwt";
import type { KeyPair } from "@nats-io/nkeys";

/**
 * Seeds travel as strings (JSON files, env). The key signs natively: minting a JWT with
 * nkeys' pure-JS Ed25519 costs ~10 ms of CPU, the gateway's bottleneck when nodes enroll.
 */
export function keyPairFromSeed(seed: string): KeyPair {
  let keyPair = signers.get(seed);
  if (!keyPair) {
    keyPair = nativeKeyPair(seed);
    signers.set(seed, keyPair);
  }
  return keyPair;
}
/** The few signing keys of a control plane (operator, tenant): derived once per process. */
const signers = new Map<string, KeyPair>();

export function seedOf(keyPair: KeyPair): string {
  return new TextDecoder().decode(keyPair.getSeed());
}

/** The standard `.creds` file text (JWT + seed) that every NATS client library reads. */
export function formatCreds(userJwt: string, userKeyPair: KeyPair): string {
  return new TextDecoder().decode(fmtCreds(userJwt, userKeyPair));
}
