import { randomBytes } from "node:crypto";
import { createCurve, fromCurveSeed, Prefix } from "@nats-io/nkeys";
import { Codec } from "@nats-io/nkeys/lib/codec.js";
import { describe, expect, it } from "vitest";
import { sealToCurveKey } from "../src/nkeys/native-seal.js";
import { openEnrollReply, PROTOCOL_VERSION, sealEnrollReply } from "../src/protocol/index.js";

// The native seal must be nkeys' `seal`, byte for byte: agents (Go and TypeScript) open it with
// their nkeys libraries.

describe("native curve seal", () => {
  it("makes exactly the bytes nkeys' seal makes for the same sender key and nonce", () => {
    for (const size of [0, 1, 31, 32, 33, 1000, 8192]) {
      const sender = createCurve();
      const recipient = createCurve();
      const message = new Uint8Array(randomBytes(size));
      const nonce = new Uint8Array(randomBytes(24));
      const rawSeed = Codec.decodeSeed(sender.getSeed()).buf;
      const native = sealToCurveKey(message, recipient.getPublicKey(), { senderSeed: rawSeed, nonce });
      expect(native.senderPublicKey).toBe(sender.getPublicKey());
      expect(Buffer.from(native.sealed).toString("hex")).toBe(
        Buffer.from(sender.seal(message, recipient.getPublicKey(), nonce)).toString("hex"),
      );
    }
  });

  it("opens with nkeys for the recipient only, with a fresh sender key each time", () => {
    const recipient = createCurve();
    const bystander = createCurve();
    const message = new TextEncoder().encode("node credentials");
    const first = sealToCurveKey(message, recipient.getPublicKey());
    const second = sealToCurveKey(message, recipient.getPublicKey());
    expect(first.senderPublicKey).not.toBe(second.senderPublicKey);
    expect(new TextDecoder().decode(recipient.open(first.sealed, first.senderPublicKey) ?? undefined)).toBe(
      "node credentials",
    );
    expect(bystander.open(first.sealed, first.senderPublicKey)).toBeNull();
    const tampered = new Uint8Array(first.sealed);
    tampered[tampered.length - 1] = (tampered.at(-1) ?? 0) ^ 1;
    expect(recipient.open(tampered, first.senderPublicKey)).toBeNull();
  });

  it("refuses a recipient that is not a public curve nkey", () => {
    const message = new Uint8Array(4);
    expect(() => sealToCurveKey(message, createCurve().getPublicKey().slice(0, -1))).toThrow();
    const userKeyAsCurve = new TextDecoder().decode(Codec.encode(Prefix.User, new Uint8Array(32)));
    expect(() => sealToCurveKey(message, userKeyAsCurve)).toThrow();
  });

  it("seals enrollment replies that the requester opens", () => {
    const requester = fromCurveSeed(createCurve().getSeed());
    const reply = sealEnrollReply(
      { v: PROTOCOL_VERSION, st: "pending", nid: "n-1", retry: 15 },
      requester.getPublicKey(),
    );
    const opened = openEnrollReply(reply, requester);
    expect(opened).toMatchObject({ ok: true, msg: { st: "pending", nid: "n-1", retry: 15 } });
  });
});
