import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { BatchWriter } from "../../src/edge/ingest/batch-writer.js";

const logger = pino({ level: "silent" });

/** A writer whose statements the test lets finish, recording each batch it was handed. */
function recordingWriter(options: { concurrency: number; batchSize: number; poison?: string }) {
  const batches: string[][] = [];
  let release: (() => void)[] = [];
  const writer = new BatchWriter<{ node: string; value: string }, string>({
    task: "test-writes",
    batchSize: options.batchSize,
    concurrency: options.concurrency,
    key: (input) => input.node,
    writeMany: async (inputs) => {
      batches.push(inputs.map((input) => `${input.node}:${input.value}`));
      await new Promise<void>((resolve) => release.push(resolve));
      if (inputs.some((input) => input.value === options.poison)) throw new Error("unstorable value");
      return inputs.map((input) => `stored ${input.node}:${input.value}`);
    },
    logger,
  });
  const releaseAll = () => {
    const waiting = release;
    release = [];
    for (const go of waiting) go();
  };
  return { writer, batches, releaseAll };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("a batch writer: one statement for many messages' writes", () => {
  it("writes the first at once and gathers what arrives meanwhile into the next batch", async () => {
    const { writer, batches, releaseAll } = recordingWriter({ concurrency: 1, batchSize: 100 });
    const outcomes = [writer.write({ node: "n0", value: "a" })];
    await tick();
    for (let i = 1; i <= 9; i++) outcomes.push(writer.write({ node: `n${i}`, value: "a" }));
    await tick();
    expect(batches).toEqual([["n0:a"]]);
    releaseAll();
    await tick();
    await tick();
    expect(batches[1]).toHaveLength(9);
    releaseAll();
    expect(await Promise.all(outcomes)).toEqual(Array.from({ length: 10 }, (_, i) => `stored n${i}:a`));
    await writer.drained();
  });

  it("never puts one node twice in a batch, and keeps each node's writes in order", async () => {
    const { writer, batches, releaseAll } = recordingWriter({ concurrency: 1, batchSize: 100 });
    const first = writer.write({ node: "busy", value: "0" });
    await tick();
    const rest = ["1", "2", "3"].map((value) => writer.write({ node: "busy", value }));
    const other = writer.write({ node: "calm", value: "1" });
    for (let round = 0; round < 6; round++) {
      releaseAll();
      await tick();
      await tick();
    }
    expect(await Promise.all([first, ...rest, other])).toHaveLength(5);
    expect(batches).toEqual([["busy:0"], ["busy:1", "calm:1"], ["busy:2"], ["busy:3"]]);
  });

  it("splits a failing batch so that only the write at fault fails", async () => {
    const { writer, releaseAll } = recordingWriter({ concurrency: 1, batchSize: 100, poison: "bad" });
    const blocker = writer.write({ node: "n0", value: "ok" });
    await tick();
    const good = writer.write({ node: "n1", value: "ok" });
    const bad = writer.write({ node: "n2", value: "bad" });
    const alsoGood = writer.write({ node: "n3", value: "ok" });
    const settled = Promise.allSettled([blocker, good, bad, alsoGood]);
    for (let round = 0; round < 8; round++) {
      releaseAll();
      await tick();
      await tick();
    }
    const results = await settled;
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(results[1]).toMatchObject({ value: "stored n1:ok" });
    expect(results[2]).toMatchObject({ reason: new Error("unstorable value") });
  });

  it("has at most `concurrency` statements in flight and at most `batchSize` in each", async () => {
    const { writer, batches, releaseAll } = recordingWriter({ concurrency: 2, batchSize: 3 });
    const all = Array.from({ length: 11 }, (_, i) => writer.write({ node: `n${i}`, value: "v" }));
    await tick();
    // The first two went at once, alone; nothing else starts while both are in flight.
    expect(batches.map((b) => b.length)).toEqual([1, 1]);
    releaseAll();
    await tick();
    await tick();
    expect(batches.map((b) => b.length)).toEqual([1, 1, 3, 3]);
    while (batches.flat().length < 11) {
      releaseAll();
      await tick();
      await tick();
    }
    releaseAll();
    await Promise.all(all);
    expect(batches.every((b) => b.length <= 3)).toBe(true);
    expect(batches.flat().sort()).toEqual(Array.from({ length: 11 }, (_, i) => `n${i}:v`).sort());
  });
});
