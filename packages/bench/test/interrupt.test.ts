import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { launcherChain } from "../src/interrupt.js";

// The benchmark's interruption paths with a real process tree: `sh -c` (as pnpm runs a script)
// → tsx → the fixture driver, which has one slow cleanup step.
const tsxCli = createRequire(import.meta.url).resolve("tsx/cli");
const fixture = join(import.meta.dirname, "fixtures/interruptible.ts");
const started: ChildProcess[] = [];
let dir = "";

afterEach(() => {
  for (const child of started.splice(0)) if (child.pid) killGroup(child.pid);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // gone already
  }
}

function alive(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
    return state !== undefined && state !== "Z";
  } catch {
    return false;
  }
}

async function poll<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

/** Starts `sh -c "node tsx fixture"` in its own group; resolves with the shell and the driver's pid. */
async function startDriver() {
  dir = mkdtempSync(join(tmpdir(), "bench-interrupt-"));
  const marker = join(dir, "marker");
  const shell = spawn("sh", ["-c", `"${process.execPath}" "${tsxCli}" "${fixture}" "${marker}"; true`], {
    stdio: "ignore",
    detached: true,
  });
  started.push(shell);
  const lines = () => readFileSync(marker, "utf8").split("\n");
  const read = () => {
    try {
      return lines();
    } catch {
      return [];
    }
  };
  const driverPid = await poll("driver ready", () => {
    const ready = read().find((line) => line.startsWith("ready "));
    return ready ? Number(ready.slice(6)) : undefined;
  });
  return { shell: shell.pid as number, driverPid, read };
}

describe("interrupting the benchmark driver", () => {
  it("finds the launcher chain (tsx, sh) of a process", async () => {
    const { shell, driverPid } = await startDriver();
    const chain = launcherChain(driverPid);
    expect(chain).toContain(shell);
    expect(chain).not.toContain(1);
  });

  it("cleans up when the launcher is killed without passing the signal on (SIGTERM to pnpm)", async () => {
    const { shell, driverPid, read } = await startDriver();
    // SIGKILL the shell: nothing reaches the driver but the shell's disappearance (the tsx in
    // between is orphaned and stays, like a pnpm that exits without forwarding SIGTERM).
    process.kill(shell, "SIGKILL");
    await poll("cleanup finished", () => (read().includes("cleaned") ? true : undefined));
    expect(read().some((line) => line.startsWith(`interrupted: launcher process ${shell} exited`))).toBe(
      true,
    );
    await poll("driver exited", () => (alive(driverPid) ? undefined : true));
  });

  it("an unhandled rejection runs the cleanup instead of ending the process halfway", async () => {
    const { driverPid, read } = await startDriver();
    process.kill(driverPid, "SIGUSR2");
    await poll("cleanup finished", () => (read().includes("cleaned") ? true : undefined));
    expect(
      read().some((line) => line.startsWith("interrupted: unexpected error: Error: stray rejection")),
    ).toBe(true);
  });

  it("a second Ctrl-C does not cut the cleanup short", async () => {
    const { driverPid, read } = await startDriver();
    process.kill(driverPid, "SIGINT");
    await poll("interrupted", () => (read().includes("interrupted: SIGINT") ? true : undefined));
    process.kill(driverPid, "SIGINT");
    await poll("cleanup finished", () => (read().includes("cleaned") ? true : undefined));
    expect(read()).toContain("repeat: SIGINT");
    await poll("driver exited", () => (alive(driverPid) ? undefined : true));
  });
});
