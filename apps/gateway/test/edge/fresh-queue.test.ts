import { describe, expect, it } from "vitest";
import { FreshQueue } from "../../src/edge/artifacts/fresh-queue.js";

describe("a queue of requests worth answering only for a while", () => {
  it("hands out the oldest fresh item first and drops the stale ones, counting them", () => {
    const dropped: string[] = [];
    const queue = new FreshQueue<string>(8_000, (item) => dropped.push(item));
    queue.push("a", 0);
    queue.push("b", 1_000);
    queue.push("c", 5_000);
    expect(queue.length).toBe(3);
    // At 9 s, "a" waited 9 s (dropped), "b" exactly 8 s (still answered).
    expect(queue.take(9_000)).toBe("b");
    expect(dropped).toEqual(["a"]);
    expect(queue.take(13_001)).toBeUndefined();
    expect(dropped).toEqual(["a", "c"]);
    expect(queue.length).toBe(0);
  });

  it("keeps order and length right across many pushes and takes", () => {
    const queue = new FreshQueue<number>(1_000);
    for (let i = 0; i < 5_000; i++) queue.push(i, 0);
    const taken: number[] = [];
    for (let i = 0; i < 3_000; i++) taken.push(queue.take(10) as number);
    for (let i = 5_000; i < 6_000; i++) queue.push(i, 10);
    expect(queue.length).toBe(3_000);
    for (let next = queue.take(20); next !== undefined; next = queue.take(20)) taken.push(next);
    expect(taken).toEqual(Array.from({ length: 6_000 }, (_, i) => i));
  });
});
