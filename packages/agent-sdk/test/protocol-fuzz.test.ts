import { encode } from "@msgpack/msgpack";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage, MESSAGE_TYPES, type MessageOf } from "../src/protocol/index.js";

// Property-based fuzzing of the protocol decoder (issue 8, #16): whatever a peer sends — random
// bytes, any MessagePack value, or a valid message with one field replaced by something hostile —
// decoding never throws, answers one of the four reasons, and whatever it accepts re-encodes
// (so the gateway can never store a value the schema did not check).

const REASONS = ["too_large", "not_msgpack", "unknown_version", "invalid"];

/** Any MessagePack-encodable value, nested, with the strings and numbers that break databases. */
const hostileValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.string(),
    fc.constantFrom("\u0000", "a\u0000b", "\uFFFF", "'; DROP TABLE node; --", "x".repeat(5000)),
    fc.integer(),
    fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, -0),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.uint8Array({ maxLength: 64 }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 8 }), tie("value"), { maxKeys: 4 }),
  ),
})).value;

function expectHandled(type: (typeof MESSAGE_TYPES)[number], bytes: Uint8Array) {
  const result = decodeMessage(type, bytes);
  if (!result.ok) {
    expect(REASONS).toContain(result.reason);
    expect(result.detail.length).toBeGreaterThan(0);
    return;
  }
  // Accepted means valid: it encodes again without complaint.
  expect(() => encodeMessage(type, result.msg as MessageOf<typeof type>)).not.toThrow();
}

describe("protocol decoder under property-based fuzzing", () => {
  it.each(MESSAGE_TYPES)("%s: random bytes never throw", (type) => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => expectHandled(type, bytes)),
      { numRuns: 300, seed: 20261125 },
    );
  });

  it.each(MESSAGE_TYPES)("%s: any MessagePack value never throws", (type) => {
    fc.assert(
      fc.property(hostileValue, (value) => expectHandled(type, encode(value))),
      { numRuns: 200, seed: 20261125 },
    );
  });

  it("a valid StatusReport with one field made hostile is refused or still valid, never thrown", () => {
    const valid = {
      v: 1,
      seq: 3,
      at: 1_700_000_000_000,
      inst: [{ app: "web", ver: "1.0", st: "running", rs: 0 }],
    };
    const fields = ["v", "seq", "at", "inst"] as const;
    const instFields = ["app", "ver", "st", "rs", "why", "tgt", "pb", "pt"] as const;
    fc.assert(
      fc.property(
        fc.constantFrom(...fields),
        fc.constantFrom(...instFields),
        fc.boolean(),
        hostileValue,
        (field, instField, inInstance, value) => {
          const message: Record<string, unknown> = structuredClone(valid);
          if (inInstance)
            (message.inst as Array<Record<string, unknown>>)[0] = { ...valid.inst[0], [instField]: value };
          else message[field] = value;
          expectHandled("statusReport", encode(message));
        },
      ),
      { numRuns: 500, seed: 20261125 },
    );
  });
});
