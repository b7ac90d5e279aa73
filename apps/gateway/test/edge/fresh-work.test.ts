import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { FreshQueue } from "../../src/edge/work/fresh-queue.js";
import { FreshWork } from "../../src/edge/work/fresh-work.js";

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

describe("fresh work: requests handled a few at a time, the stale ones dropped", () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** A promise the test resolves when it wants a handler to go on. */
  const gate = () => {
    let release = () => {};
    const blocked = new Promise<void>((resolve) => {
      release = resolve;
    });
    return { blocked, release };
  };

  it("never runs more than its concurrency at once, oldest first, and drains", async () => {
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const work = new FreshWork<number>({
      task: "test",
      concurrency: 3,
      batchSize: 1,
      maxWaitMs: 60_000,
      handle: async ([item]) => {
        running++;
        most = Math.max(most, running);
        await sleep(5);
        order.push(item as number);
        running--;
      },
      onDropped: () => {
        throw new Error("nothing waits that long here");
      },
      logger: pino({ level: "silent" }),
    });
    for (let i = 0; i < 20; i++) work.push(i);
    await work.drained();
    expect(most).toBe(3);
    expect(order).toHaveLength(20);
    // Started in order; with equal handling times they finish in groups of three, in order too.
    expect(order.slice(0, 3).sort()).toEqual([0, 1, 2]);
  });

  it("drops what waited longer than maxWaitMs unanswered, counting it, and a failing handler does not stop it", async () => {
    const dropped: number[] = [];
    const handled: number[] = [];
    const { blocked, release } = gate();
    const work = new FreshWork<number>({
      task: "test",
      concurrency: 1,
      batchSize: 1,
      maxWaitMs: 50,
      handle: async ([item]) => {
        if (item === 0) await blocked;
        if (item === 5) throw new Error("handler failed");
        handled.push(item as number);
      },
      onDropped: (item) => dropped.push(item),
      logger: pino({ level: "silent" }),
    });
    work.push(0); // holds the only slot
    work.push(1);
    work.push(2); // both wait behind it
    await sleep(100);
    work.push(5);
    work.push(3); // fresh
    release();
    await work.drained();
    expect(dropped).toEqual([1, 2]);
    expect(handled).toEqual([0, 3]);
  });

  it("hands a handler up to batchSize fresh requests at once", async () => {
    const batches: number[][] = [];
    const { blocked, release } = gate();
    const work = new FreshWork<number>({
      task: "test",
      concurrency: 1,
      batchSize: 4,
      maxWaitMs: 60_000,
      handle: async (items) => {
        batches.push(items);
        if (items[0] === 0) await blocked;
      },
      onDropped: () => undefined,
      logger: pino({ level: "silent" }),
    });
    for (let i = 0; i < 10; i++) work.push(i);
    release();
    await work.drained();
    expect(batches).toEqual([[0], [1, 2, 3, 4], [5, 6, 7, 8], [9]]);
  });
});
