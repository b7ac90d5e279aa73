import { randomBytes } from "node:crypto";
import { createAccount, createUser, fromSeed } from "@nats-io/nkeys";
import { credsAuthenticator, jwtAuthenticator } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { nativeCredsAuthenticator, nativeJwtAuthenticator, nativeKeyPair } from "../src/nkeys/native.js";

// Ed25519 is deterministic: the native signer must produce exactly the library's bytes.

describe("native nkeys signing", () => {
  it("signs exactly as nkeys does, for user and account keys", () => {
    for (const key of [createUser(), createUser(), createAccount()]) {
      const native = nativeKeyPair(key.getSeed());
      expect(native.getPublicKey()).toBe(key.getPublicKey());
      expect(Buffer.from(native.getPrivateKey()).equals(Buffer.from(key.getPrivateKey()))).toBe(true);
      for (const size of [0, 1, 32, 1000]) {
        const data = new Uint8Array(randomBytes(size));
        expect(Buffer.from(native.sign(data)).toString("hex")).toBe(
          Buffer.from(key.sign(data)).toString("hex"),
        );
        expect(key.verify(data, native.sign(data))).toBe(true);
      }
    }
  });

  it("answers a server nonce exactly as nats.js's jwt and creds authenticators", () => {
    const key = createUser();
    const seed = key.getSeed();
    const jwt = "eyJ0eXAiOiJKV1QifQ.e30.sig";
    const creds = `-----BEGIN NATS USER JWT-----\n${jwt}\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${new TextDecoder().decode(seed)}\n------END USER NKEY SEED------\n`;
    for (const nonce of ["abc", "nonce-from-server-1234", undefined]) {
      expect(nativeJwtAuthenticator(jwt, seed)(nonce)).toEqual(jwtAuthenticator(jwt, seed)(nonce));
      expect(nativeCredsAuthenticator(new TextEncoder().encode(creds))(nonce)).toEqual(
        credsAuthenticator(new TextEncoder().encode(creds))(nonce),
      );
    }
    expect(fromSeed(seed).getPublicKey()).toBe(key.getPublicKey());
  });

  it("refuses creds without a seed", () => {
    expect(() =>
      nativeCredsAuthenticator("-----BEGIN NATS USER JWT-----\nx\n------END NATS USER JWT------\n"),
    ).toThrow(/unable to parse credentials/);
  });
});
