import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { InstanceStatus } from "../src/protocol/index.js";
import { HollowRuntime } from "../src/runtime/hollow.js";
import { waitFor } from "../src/testing.js";
import { MemoryChunkSource, sha256 } from "./support/memory-chunk-source.js";

function record(runtime: HollowRuntime): InstanceStatus[] {
  const seen: InstanceStatus[] = [];
  runtime.onChange(() => seen.push(...runtime.instances()));
  return seen;
}

describe("hollow runtime", () => {
  it("reports per-app usage of the version that runs, when given a usage model (metric-gate tests)", async () => {
    const runtime = new HollowRuntime({
      stepMs: [1, 5],
      usage: (_app, version) => (version === "hog" ? { cpu: 600.4, mem: 8e7 } : { cpu: 100, mem: 4e7 }),
    });
    expect(await runtime.sampleUsage()).toEqual([]);
    runtime.put("web", "1", { command: ["web"] });
    await waitFor("1 running", () => (runtime.instances()[0]?.st === "running" ? true : undefined));
    expect(await runtime.sampleUsage()).toEqual([{ app: "web", cpu: 100, mem: 40_000_000 }]);
    runtime.put("web", "hog", { command: ["web"] }, { sha: sha256(Buffer.from("hog")) });
    // While "hog" pulls, "1" still runs: its usage is reported.
    expect(await runtime.sampleUsage()).toEqual([{ app: "web", cpu: 100, mem: 40_000_000 }]);
    await waitFor("hog running", () =>
      runtime.instances()[0]?.st === "running" && runtime.instances()[0]?.ver === "hog" ? true : undefined,
    );
    expect(await runtime.sampleUsage()).toEqual([{ app: "web", cpu: 600, mem: 80_000_000 }]);
    // Without a model, nothing (as before: no per-app series from hollow agents).
    expect(await new HollowRuntime().sampleUsage()).toEqual([]);
    await runtime.shutdown();
  });

  it("crash-loops a version as its crash model says: failed, restarted with the count up, running again", async () => {
    const runtime = new HollowRuntime({
      stepMs: [1, 3],
      usage: (_app, _version, runningForMs) => ({ cpu: 100, mem: 1000 + runningForMs }),
      crashes: (_app, version, crashes) =>
        version === "loop" && crashes < 2 ? { afterMs: 30, downMs: 20 } : null,
    });
    const seen = record(runtime);
    runtime.put("web", "1", { command: ["web"] });
    await waitFor("1 running", () => (runtime.instances()[0]?.st === "running" ? true : undefined));
    runtime.put("web", "loop", { command: ["web"] });
    await waitFor("two restarts, running again", () => {
      const [one] = runtime.instances();
      return one?.rs === 2 && one.st === "running" ? true : undefined;
    });
    const loop = seen.filter((status) => status.ver === "loop" || status.tgt === "loop");
    // A crash reports the crashed version failed (not the one before it), then its restart.
    expect(loop.filter((s) => s.st === "failed")).toEqual([
      { app: "web", ver: "loop", st: "failed", why: "exited with code 1", rs: 0 },
      { app: "web", ver: "loop", st: "failed", why: "exited with code 1", rs: 1 },
    ]);
    expect(loop.filter((s) => s.st === "starting").map((s) => s.rs)).toEqual([0, 1, 2]);
    // Usage: the leak model sees the time since the last restart.
    const [usage] = await runtime.sampleUsage();
    expect(usage?.mem).toBeGreaterThanOrEqual(1000);
    expect(usage?.mem).toBeLessThan(1000 + 1000);
    // No third crash (the model said so): still running, restarts stay at 2.
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(runtime.instances()[0]).toMatchObject({ st: "running", ver: "loop", rs: 2 });
    await runtime.shutdown();
  });

  it("reports no usage for a crashed app waiting for its restart", async () => {
    const runtime = new HollowRuntime({
      stepMs: [1, 3],
      usage: () => ({ cpu: 100, mem: 1000 }),
      crashes: () => ({ afterMs: 5, downMs: 60_000 }),
    });
    runtime.put("web", "1", { command: ["web"] });
    await waitFor("crashed", () => (runtime.instances()[0]?.st === "failed" ? true : undefined));
    expect(await runtime.sampleUsage()).toEqual([]);
    await runtime.shutdown();
  });

  it("simulates pulling an artifact (progress, no bytes) while the old version keeps running", async () => {
    const source = new MemoryChunkSource();
    const runtime = new HollowRuntime({ stepMs: [1, 5], simulatedArtifactBytes: 1000 });
    runtime.useChunkSource(source);
    const seen = record(runtime);
    runtime.put("web", "1", { command: ["web"] });
    await waitFor("1 running", () => (runtime.instances()[0]?.st === "running" ? true : undefined));
    runtime.put("web", "2", { command: ["web"] }, { sha: sha256(Buffer.from("v2")) });
    await waitFor("2 running", () =>
      runtime.instances()[0]?.st === "running" && runtime.instances()[0]?.ver === "2" ? true : undefined,
    );
    expect(seen.filter((status) => status.st === "pulling")).toEqual([
      { app: "web", ver: "1", st: "pulling", rs: 0, tgt: "2", pb: 500, pt: 1000 },
      { app: "web", ver: "1", st: "pulling", rs: 0, tgt: "2", pb: 1000, pt: 1000 },
    ]);
    expect(source.requests).toHaveLength(0);
    await runtime.shutdown();
  });

  it("fetches for real when asked to, and refuses a wrong hash", async () => {
    const source = new MemoryChunkSource();
    const content = randomBytes(300_000);
    const obj = source.add(content);
    const runtime = new HollowRuntime({ stepMs: [1, 5], fetchArtifacts: true });
    runtime.useChunkSource(source);
    runtime.put("web", "1", { command: ["web"] }, { sha: obj });
    await waitFor("1 running", () => (runtime.instances()[0]?.st === "running" ? true : undefined));
    expect(source.requests.map((request) => request.off)).toEqual([0, 131072, 262144]);

    const wrong = sha256(Buffer.from("wrong"));
    runtime.put("web", "2", { command: ["web"] }, { sha: wrong, obj });
    const failed = await waitFor("2 refused", () =>
      runtime.instances()[0]?.st === "failed" ? runtime.instances()[0] : undefined,
    );
    expect(failed).toMatchObject({
      ver: "1",
      tgt: "2",
      why: `artifact SHA-256 mismatch: expected ${wrong}, got ${obj}`,
    });
    await runtime.shutdown();
  });

  it("fetches like the real fetcher: 4 chunks in flight, progress at most every 2 s", async () => {
    const source = new MemoryChunkSource();
    source.delayMs = 20;
    const obj = source.add(randomBytes(1024 * 1024));
    const runtime = new HollowRuntime({ stepMs: [1, 5], fetchArtifacts: true });
    runtime.useChunkSource(source);
    const seen = record(runtime);
    runtime.put("web", "1", { command: ["web"] }, { sha: obj });
    await waitFor("1 running", () => (runtime.instances()[0]?.st === "running" ? true : undefined));
    expect(source.requests.map((request) => request.off)).toEqual(
      Array.from({ length: 8 }, (_, index) => index * 131072),
    );
    expect(source.maxInFlight).toBe(4);
    // Within 2 s: the first chunk's progress and the last, not one report per chunk.
    expect(seen.filter((status) => status.st === "pulling").map((status) => status.pb)).toEqual([
      131072,
      1024 * 1024,
    ]);
    await runtime.shutdown();
  });

  it("retries unanswered chunks without an attempt limit, like the real fetcher (a gateway restarting)", async () => {
    const source = new MemoryChunkSource();
    const obj = source.add(randomBytes(200_000));
    // The second chunk goes unanswered 8 times (more than any fixed small limit), then is served.
    source.fault = ({ off, attempt }) => (off > 0 && attempt <= 8 ? new Error("no responders") : undefined);
    // random 0: no backoff delay and the shortest state steps, so the test takes milliseconds.
    const runtime = new HollowRuntime({ stepMs: [1, 5], fetchArtifacts: true, random: () => 0 });
    runtime.useChunkSource(source);
    runtime.put("web", "1", { command: ["web"] }, { sha: obj });
    await waitFor("1 running", () => (runtime.instances()[0]?.st === "running" ? true : undefined));
    expect(source.requests.filter((request) => request.off === 131072)).toHaveLength(9);
    await runtime.shutdown();
  });
});
