import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildNativeAgent } from "../src/scale/go-hollow.js";
import { WorkerPool } from "../src/workers.js";

// The Go generator behind the WorkerPool interface: the real binary (apps/agent/build.sh, cached by
// source hash), spoken to in JSON lines on its stdin/stdout.
describe("WorkerPool of native hollow processes", () => {
  let binary: string;
  let logDir: string;

  beforeAll(() => {
    binary = buildNativeAgent(join(import.meta.dirname, "../../.."));
    logDir = mkdtempSync(join(tmpdir(), "bench-go-workers-"));
  }, 300_000);
  afterAll(() => rmSync(logDir, { recursive: true, force: true }));

  it("answers each command the scale scenario sends with its reply, and exits on stop", async () => {
    const pool = await WorkerPool.startGo(2, logDir, binary);
    try {
      expect(pool.pids()).toHaveLength(2);
      expect(await pool.stopAgents(["not-ours"])).toEqual([]);
      expect(await pool.restartAgents([])).toEqual([]);
      expect(await pool.watchHellos(0)).toEqual({ nodes: [], watched: 0 });
      expect(await pool.connect(10, 1)).toEqual([]);
      expect(pool.totals()).toEqual({ enrolled: 0, started: 0, connected: 0 });
    } finally {
      await pool.stop(5_000);
    }
    expect(pool.pids()).toEqual([]);
  }, 60_000);

  it("fails a command with the Go generator's own message", async () => {
    const pool = await WorkerPool.startGo(1, logDir, binary);
    try {
      await expect(pool.deliveries()).rejects.toThrow(
        /Go hollow worker 0: deliveries: not supported by the Go generator/,
      );
    } finally {
      await pool.stop(5_000);
    }
    const unreachable = await WorkerPool.startGo(1, logDir, binary);
    try {
      await expect(
        unreachable.enroll(2, {
          token: "t",
          natsUrl: "nats://127.0.0.1:1",
          enrollCreds: "",
          namePrefix: "x",
          concurrency: 1,
        }),
      ).rejects.toThrow(/enroll: connect to nats:\/\/127\.0\.0\.1:1/);
    } finally {
      await unreachable.stop(5_000);
    }
  }, 60_000);

  it("reports a binary that cannot start", async () => {
    await expect(WorkerPool.startGo(1, logDir, join(logDir, "no-such-binary"))).rejects.toThrow(
      /Go hollow worker 0: spawn .*ENOENT/,
    );
  });
});
