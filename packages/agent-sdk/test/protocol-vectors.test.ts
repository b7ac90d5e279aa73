import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  decodeMessage,
  encodeMessage,
  MESSAGE_TYPES,
  type MessageOf,
  type MessageType,
  ProtocolEncodeError,
  SITE_CACHE_CHUNK_BYTES,
  SITE_CACHE_DIRECT_GET_SUBJECT,
  siteCacheDirectGetRequest,
  siteCacheHit,
} from "../src/protocol/index.js";

interface Vector {
  name: string;
  msg: unknown;
  hex?: string;
}

const vectorUrl = (file: string) => new URL(`../src/protocol/vectors/${file}`, import.meta.url);
// `UPDATE_VECTORS=1 pnpm test` rewrites the hex of every vector; review the diff before committing.
const updating = process.env.UPDATE_VECTORS === "1";

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

/** JSON has no bytes: a vector writes a MessagePack bin field as `{"$bin": "<hex>"}`. */
function withBytes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withBytes);
  if (typeof value !== "object" || value === null) return value;
  const bin = (value as { $bin?: unknown }).$bin;
  if (typeof bin === "string") return new Uint8Array(Buffer.from(bin, "hex"));
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, withBytes(field)]));
}

describe.each(MESSAGE_TYPES)("%s vectors", (type: MessageType) => {
  const vectors = JSON.parse(readFileSync(vectorUrl(`${type}.json`), "utf8")) as Vector[];

  if (updating) {
    for (const vector of vectors)
      vector.hex = hex(encodeMessage(type, withBytes(vector.msg) as MessageOf<typeof type>));
    writeFileSync(vectorUrl(`${type}.json`), `${JSON.stringify(vectors, null, 2)}\n`);
  }

  it.each(vectors)("$name: object encodes to the pinned bytes", (vector) => {
    expect(vector.hex, "vector has no hex: run UPDATE_VECTORS=1").toBeTypeOf("string");
    expect(hex(encodeMessage(type, withBytes(vector.msg) as MessageOf<typeof type>))).toBe(vector.hex);
  });

  it.each(vectors)("$name: pinned bytes decode to the object", (vector) => {
    // A plain Uint8Array, as NATS hands it over (bin fields decode to views of the payload).
    const result = decodeMessage(type, new Uint8Array(Buffer.from(vector.hex ?? "", "hex")));
    expect(result).toEqual({ ok: true, msg: withBytes(vector.msg) });
  });
});

interface InvalidVector {
  name: string;
  type: MessageType;
  hex?: string;
  hexRepeat?: { hex: string; times: number };
  reason: string;
}

describe("bad input", () => {
  const vectors = JSON.parse(readFileSync(vectorUrl("invalid.json"), "utf8")) as InvalidVector[];

  it.each(vectors)("$name → $reason, no throw", (vector) => {
    const text = vector.hexRepeat ? vector.hexRepeat.hex.repeat(vector.hexRepeat.times) : (vector.hex ?? "");
    const result = decodeMessage(vector.type, Buffer.from(text, "hex"));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe(vector.reason);
    expect(result.detail.length).toBeGreaterThan(0);
  });

  it("names the offending field of an invalid message", () => {
    // A hand-built report whose instance has an unknown state.
    const badState = decodeMessage(
      "statusReport",
      Buffer.from("84a17601a37365710ba2617401a4696e73749183a3617070a161a27374a4646f6e65a2727300", "hex"),
    );
    expect(badState).toMatchObject({ ok: false, reason: "invalid" });
    if (!badState.ok) expect(badState.detail).toContain("inst.0.st");
  });

  it("survives random garbage of every message type without throwing", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (const type of MESSAGE_TYPES) {
      for (let i = 0; i < 300; i++) {
        const bytes = Uint8Array.from({ length: Math.floor(random() * 80) }, () =>
          Math.floor(random() * 256),
        );
        const result = decodeMessage(type, bytes);
        if (!result.ok)
          expect(["too_large", "not_msgpack", "unknown_version", "invalid"]).toContain(result.reason);
      }
    }
  });

  it("refuses to encode an invalid message (a sender bug)", () => {
    expect(() => encodeMessage("heartbeat", { v: 1, s: -1 })).toThrow(ProtocolEncodeError);
    expect(() =>
      encodeMessage("hello", { v: 1, av: "", os: "linux", arch: "x64", boot: "b", rev: 0 }),
    ).toThrow(/av/);
  });

  it("refuses to encode a message over its size limit", () => {
    const inst = Array.from({ length: 512 }, (_, i) => ({
      app: `app-${i}-${"x".repeat(100)}`,
      st: "failed" as const,
      why: "y".repeat(200),
      rs: 0,
    }));
    expect(() => encodeMessage("statusReport", { v: 1, seq: 1, at: 0, inst })).toThrow(/limit/);
  });

  it("rejects an approved enrollment reply without credentials", () => {
    const bytes = Buffer.from("82a17601a27374a8617070726f766564", "hex");
    expect(decodeMessage("enrollReply", bytes)).toMatchObject({ ok: false, reason: "invalid" });
  });
});

// The site cache's direct get (not MessagePack): the same file is read by the Go agent's tests.
describe("site cache direct get vectors", () => {
  const vectors = JSON.parse(readFileSync(vectorUrl("site-cache/direct-get.json"), "utf8")) as {
    chunkBytes: number;
    requests: Array<{ obj: string; offset: number; subject: string; payload: string }>;
    replies: Array<{
      name: string;
      offset: number;
      status: number;
      size: string | null;
      dataBytes: number;
      hit: number | null;
    }>;
  };

  it("cuts at the agents' chunk size", () => {
    expect(vectors.chunkBytes).toBe(SITE_CACHE_CHUNK_BYTES);
  });

  it.each(vectors.requests)("asks for chunk at $offset with the pinned bytes", (vector) => {
    expect(SITE_CACHE_DIRECT_GET_SUBJECT).toBe(vector.subject);
    expect(new TextDecoder().decode(siteCacheDirectGetRequest(vector.obj, vector.offset))).toBe(
      vector.payload,
    );
  });

  it.each(vectors.replies)("$name: judged as the vector says", (vector) => {
    expect(
      siteCacheHit({ status: vector.status, size: vector.size, dataBytes: vector.dataBytes }, vector.offset),
    ).toBe(vector.hit);
  });
});
