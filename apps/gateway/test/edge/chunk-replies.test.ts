import { describe, expect, it } from "vitest";
import { ChunkReplies } from "../../src/edge/artifacts/chunk-replies.js";

const reply = (bytes: number, fill = 1) => ({
  payload: new Uint8Array(bytes).fill(fill),
  dataBytes: bytes - 20,
});

describe("chunk replies kept in memory", () => {
  it("answers a chunk again only for the same bucket, object, offset and length", () => {
    const replies = new ChunkReplies(1_000);
    const kept = reply(100);
    replies.set("ART_1", "aa", 0, 128, kept);
    expect(replies.get("ART_1", "aa", 0, 128)).toBe(kept);
    // Another organization's bucket holding the same object never gets this one's entry.
    expect(replies.get("ART_2", "aa", 0, 128)).toBeUndefined();
    expect(replies.get("ART_1", "bb", 0, 128)).toBeUndefined();
    expect(replies.get("ART_1", "aa", 128, 128)).toBeUndefined();
    expect(replies.get("ART_1", "aa", 0, 64)).toBeUndefined();
  });

  it("stays within its byte bound, evicting the least recently used first", () => {
    const replies = new ChunkReplies(300);
    replies.set("B", "o", 0, 1, reply(100));
    replies.set("B", "o", 1, 1, reply(100));
    replies.set("B", "o", 2, 1, reply(100));
    expect(replies.size).toEqual({ entries: 3, bytes: 300 });
    // Offset 0 is used again: offset 1 is now the oldest and goes when offset 3 comes.
    expect(replies.get("B", "o", 0, 1)).toBeDefined();
    replies.set("B", "o", 3, 1, reply(100));
    expect(replies.size).toEqual({ entries: 3, bytes: 300 });
    expect(replies.get("B", "o", 1, 1)).toBeUndefined();
    expect(replies.get("B", "o", 0, 1)).toBeDefined();
    expect(replies.get("B", "o", 3, 1)).toBeDefined();
    // Replacing an entry counts its bytes once.
    replies.set("B", "o", 3, 1, reply(50));
    expect(replies.size).toEqual({ entries: 3, bytes: 250 });
  });

  it("keeps nothing larger than its bound, and nothing at all with a bound of 0", () => {
    const small = new ChunkReplies(99);
    small.set("B", "o", 0, 1, reply(100));
    expect(small.size).toEqual({ entries: 0, bytes: 0 });
    const none = new ChunkReplies(0);
    none.set("B", "o", 0, 1, reply(1));
    expect(none.get("B", "o", 0, 1)).toBeUndefined();
  });
});
