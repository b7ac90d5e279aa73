import { appendFile, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DiskOutbox } from "../src/agent/disk-outbox.js";
import { MemoryOutbox } from "../src/agent/outbox.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-sdk-outbox-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const payload = (text: string) => new TextEncoder().encode(text);
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("disk outbox", () => {
  it("keeps records in order until acknowledged", async () => {
    const outbox = await DiskOutbox.open({ dir, maxBytes: 1 << 20, segmentBytes: 256 });
    for (let i = 1; i <= 20; i++) await outbox.append(i % 2 ? "st" : "mx", i, payload(`m${i}`));
    const first = await outbox.peek(5);
    expect(first.map((record) => [record.index, record.type, record.key, text(record.payload)])).toEqual([
      [0, "st", 1, "m1"],
      [1, "mx", 2, "m2"],
      [2, "st", 3, "m3"],
      [3, "mx", 4, "m4"],
      [4, "st", 5, "m5"],
    ]);
    await outbox.ack(2);
    expect((await outbox.peek(2)).map((record) => record.key)).toEqual([4, 5]);
    expect(outbox.stats().records).toBe(17);
    await outbox.ack(19);
    expect(await outbox.peek(5)).toEqual([]);
    expect(outbox.stats()).toMatchObject({ records: 0, bytes: 0 });
    // Delivered segments are deleted.
    expect((await readdir(dir)).filter((name) => name.endsWith(".seg"))).toEqual([]);
    await outbox.close();
  });

  it("survives a restart: undelivered records come back, delivered ones do not", async () => {
    const first = await DiskOutbox.open({ dir, maxBytes: 1 << 20, segmentBytes: 128 });
    for (let i = 1; i <= 10; i++) await first.append("st", i, payload(`s${i}`));
    await first.ack(3);
    await first.close();
    const second = await DiskOutbox.open({ dir, maxBytes: 1 << 20, segmentBytes: 128 });
    expect((await second.peek(100)).map((record) => record.key)).toEqual([5, 6, 7, 8, 9, 10]);
    await second.append("ack", 99, payload("a"));
    const all = await second.peek(100);
    expect(all.map((record) => record.key)).toEqual([5, 6, 7, 8, 9, 10, 99]);
    expect(all.at(-1)?.index).toBe(10);
    await second.close();
  });

  it("cuts off a record torn by a crash mid-write", async () => {
    const first = await DiskOutbox.open({ dir, maxBytes: 1 << 20 });
    await first.append("st", 1, payload("whole"));
    await first.close();
    const [segment] = (await readdir(dir)).filter((name) => name.endsWith(".seg"));
    await appendFile(join(dir, segment as string), Buffer.from([40, 0, 0, 0, 1, 2, 3]));
    const second = await DiskOutbox.open({ dir, maxBytes: 1 << 20 });
    expect((await second.peek(10)).map((record) => text(record.payload))).toEqual(["whole"]);
    await second.append("st", 2, payload("next"));
    expect((await second.peek(10)).map((record) => text(record.payload))).toEqual(["whole", "next"]);
    await second.close();
  });

  it("evicts the oldest metrics first when over its cap, keeping status and acks", async () => {
    const evictions: number[] = [];
    const outbox = await DiskOutbox.open({
      dir,
      maxBytes: 4 * 1024,
      segmentBytes: 1024,
      onEvict: (count) => evictions.push(count),
    });
    const big = "x".repeat(100);
    for (let i = 1; i <= 60; i++) {
      await outbox.append(i % 10 === 0 ? "st" : "mx", i, payload(`${i}:${big}`));
    }
    const left = await outbox.peek(1000);
    const keys = left.map((record) => record.key);
    // Every status survived; the metrics kept are the newest ones; order is preserved.
    expect(keys.filter((key) => key % 10 === 0)).toEqual([10, 20, 30, 40, 50, 60]);
    const metrics = keys.filter((key) => key % 10 !== 0);
    expect(metrics.length).toBeGreaterThan(0);
    expect(metrics.at(-1)).toBe(59);
    expect(Math.min(...metrics)).toBeGreaterThan(20);
    expect([...keys].sort((a, b) => a - b)).toEqual(keys);
    expect(outbox.stats().bytes).toBeLessThanOrEqual(4 * 1024);
    expect(outbox.stats().evicted).toBe(60 - left.length);
    expect(evictions.reduce((sum, count) => sum + count, 0)).toBe(60 - left.length);
    await outbox.close();
  });

  it("refuses a cap smaller than four segments", async () => {
    await expect(DiskOutbox.open({ dir, maxBytes: 1000, segmentBytes: 1024 })).rejects.toThrow(
      /below 4 segments/,
    );
  });
});

describe("memory outbox", () => {
  it("evicts the oldest metrics first", async () => {
    const outbox = new MemoryOutbox(30);
    await outbox.append("mx", 1, payload("0123456789"));
    await outbox.append("st", 1, payload("0123456789"));
    await outbox.append("mx", 2, payload("0123456789"));
    await outbox.append("mx", 3, payload("0123456789"));
    expect((await outbox.peek(10)).map((record) => `${record.type}${record.key}`)).toEqual([
      "st1",
      "mx2",
      "mx3",
    ]);
    await outbox.ack(2);
    expect((await outbox.peek(10)).map((record) => `${record.type}${record.key}`)).toEqual(["mx3"]);
  });
});
