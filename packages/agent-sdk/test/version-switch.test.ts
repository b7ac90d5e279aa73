import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create as createTar } from "tar";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InstanceStatus, RunSpec } from "../src/protocol/index.js";
import { ProcessRuntime } from "../src/runtime/process.js";
import { waitFor } from "../src/testing.js";
import { isAlive } from "./support/is-alive.js";
import { MemoryChunkSource, sha256 } from "./support/memory-chunk-source.js";

// Version switches on real processes with real artifacts (a .tar.gz and a single binary), served
// from memory in the gateway's chunk shapes; the same path through the real gateway is in
// apps/gateway/test/artifact-e2e.integration.test.ts.

let dir: string;
let source: MemoryChunkSource;
let runtime: ProcessRuntime;

function newRuntime(): ProcessRuntime {
  const created = new ProcessRuntime({
    appsDir: join(dir, "apps"),
    restartBackoff: { minMs: 200, maxMs: 400, stableAfterMs: 60_000 },
    fetch: { retry: { baseMs: 10, maxMs: 50 } },
    progressIntervalMs: 0,
  });
  created.useChunkSource(source);
  return created;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-sdk-switch-"));
  source = new MemoryChunkSource();
  runtime = newRuntime();
});
afterEach(async () => {
  await runtime.shutdown();
  await rm(dir, { recursive: true, force: true });
});

/** A .tar.gz holding `run.js`: writes its pid (and `ready` when healthy) and stays up. */
async function tarball(version: string, healthy: boolean): Promise<Uint8Array> {
  const src = await mkdtemp(join(dir, "src-"));
  await writeFile(
    join(src, "run.js"),
    `const fs = require("fs");
     fs.writeFileSync(${JSON.stringify(join(dir, "pid-"))} + ${JSON.stringify(version)}, String(process.pid));
     ${healthy ? 'fs.writeFileSync("ready", "");' : ""}
     setInterval(() => {}, 1000);`,
  );
  const file = join(dir, `${version}.tar.gz`);
  await createTar({ gzip: true, file, cwd: src }, ["run.js"]);
  return readFile(file);
}

const spec = (extra: Partial<RunSpec> = {}): RunSpec => ({
  command: [process.execPath, "run.js"],
  health: { exec: ["test", "-f", "ready"], intervalSeconds: 1, timeoutSeconds: 1, failureThreshold: 2 },
  revertOnFailure: true,
  ...extra,
});

const web = () => runtime.instances().find((instance) => instance.app === "web");
const pidOf = async (version: string) => Number(await readFile(join(dir, `pid-${version}`), "utf8"));

function waitForWeb(description: string, check: (status: InstanceStatus) => boolean, timeoutMs = 20_000) {
  return waitFor(
    `web ${description} (now ${JSON.stringify(web())})`,
    () => {
      const status = web();
      return status && check(status) ? status : undefined;
    },
    timeoutMs,
  );
}

describe("version switches", () => {
  it("fetches and runs a tarball, refuses a wrong hash while the old version runs, reverts a version failing its health check", async () => {
    const seen: InstanceStatus[] = [];
    runtime.onChange(() => seen.push(...runtime.instances()));

    // 1.0.0: fetched (pulling with bytes), unpacked, started in its own directory.
    const v1 = source.add(await tarball("1.0.0", true));
    runtime.put("web", "1.0.0", spec(), { sha: v1 });
    await waitForWeb("running 1.0.0", (status) => status.st === "running" && status.ver === "1.0.0");
    const pulling = seen.findLast((status) => status.st === "pulling");
    const size = source.objects.get(v1)?.byteLength;
    expect(pulling).toMatchObject({ tgt: "1.0.0", pb: size, pt: size });
    expect(seen.find((status) => status.st === "pulling")).toMatchObject({ pb: 0 });
    const pid1 = await pidOf("1.0.0");
    expect(isAlive(pid1)).toBe(true);
    expect(await readdir(join(dir, "apps/web/versions"))).toEqual([v1]);

    // 2.0.0 states a hash its bytes do not have: refused, 1.0.0 keeps running untouched.
    const v2 = source.add(await tarball("2.0.0", true));
    const wrong = sha256(Buffer.from("not the artifact"));
    runtime.put("web", "2.0.0", spec(), { sha: wrong, obj: v2 });
    const refused = await waitForWeb("refusing 2.0.0", (status) => status.st === "failed");
    expect(refused).toMatchObject({ ver: "1.0.0", tgt: "2.0.0" });
    expect(refused.why).toBe(`artifact SHA-256 mismatch: expected ${wrong}, got ${v2}; still running 1.0.0`);
    expect(isAlive(pid1)).toBe(true);
    expect(await readFile(join(dir, "pid-2.0.0"), "utf8").catch(() => "never ran")).toBe("never ran");

    // 3.0.0 starts but never passes its health check: failed within its window, back to 1.0.0.
    const v3 = source.add(await tarball("3.0.0", false));
    runtime.put("web", "3.0.0", spec(), { sha: v3 });
    const reverted = await waitForWeb(
      "reverted",
      (status) => status.st === "failed" && status.tgt === "3.0.0",
    );
    expect(reverted.ver).toBe("1.0.0");
    expect(reverted.why).toMatch(/^3\.0\.0 failed within its 3 s start window: .*; reverted to 1\.0\.0$/);
    expect(isAlive(await pidOf("3.0.0"))).toBe(false);
    await waitFor("1.0.0 started again", async () => {
      const pid = await pidOf("1.0.0");
      return pid !== pid1 && isAlive(pid) ? pid : undefined;
    });
    expect(isAlive(pid1)).toBe(false);
    // The revert came from disk: 1.0.0 was not fetched again.
    expect(source.requests.filter((request) => request.obj === v1)).toHaveLength(1);

    // An agent restart with 3.0.0 still desired runs 1.0.0 and keeps 3.0.0 failed (slot.json).
    await runtime.shutdown();
    runtime = newRuntime();
    runtime.put("web", "3.0.0", spec(), { sha: v3 });
    const afterRestart = await waitForWeb("restored", (status) => status.ver === "1.0.0");
    expect(afterRestart).toMatchObject({ st: "failed", tgt: "3.0.0" });
    await waitFor("1.0.0 running behind the failed switch", async () =>
      isAlive(await pidOf("1.0.0").catch(() => 0)) ? true : undefined,
    );

    // A single binary: installed as ./artifact, executable; older versions are collected.
    const binary = new TextEncoder().encode(
      `#!/bin/sh\necho $$ > ${join(dir, "pid-4.0.0")}\nexec sleep 1000\n`,
    );
    const v4 = source.add(binary);
    const checked = {
      exec: ["test", "-x", "artifact"],
      intervalSeconds: 1,
      timeoutSeconds: 1,
      failureThreshold: 1,
    };
    runtime.put(
      "web",
      "4.0.0",
      { command: ["./artifact"], health: checked, revertOnFailure: true },
      { sha: v4 },
    );
    await waitForWeb("running 4.0.0", (status) => status.st === "running" && status.ver === "4.0.0");
    await waitFor(
      "4.0.0 past its start window, older versions collected",
      async () => {
        const versions = (await readdir(join(dir, "apps/web/versions"))).sort();
        return JSON.stringify(versions) === JSON.stringify([v1, v4].sort()) ? versions : undefined;
      },
      15_000,
    );
  }, 60_000);

  it("still reverts a version whose start window an agent restart interrupted", async () => {
    const v1 = source.add(await tarball("1.0.0", true));
    runtime.put("web", "1.0.0", spec(), { sha: v1 });
    await waitForWeb("running 1.0.0", (status) => status.st === "running");
    const v2 = source.add(await tarball("2.0.0", false));
    runtime.put("web", "2.0.0", spec(), { sha: v2 });
    await waitFor("2.0.0 started", () => pidOf("2.0.0").catch(() => undefined));

    // The agent stops within 2.0.0's window, before its health check has had its say.
    await runtime.shutdown();
    runtime = newRuntime();
    runtime.put("web", "2.0.0", spec(), { sha: v2 });
    const reverted = await waitForWeb("reverted after the restart", (status) => status.st === "failed");
    expect(reverted).toMatchObject({ ver: "1.0.0", tgt: "2.0.0" });
    expect(reverted.why).toContain("reverted to 1.0.0");
  }, 30_000);
});
