import { spawn } from "node:child_process";

/**
 * The machine's benchmarks take turns: whoever measures holds `flock /tmp/bench-cpu.lock` (the edge
 * benchmark runs under the same lock). Held by a child `flock … cat` that lives as long as its
 * stdin: if this process dies, the pipe closes and the lock is released with it.
 */

export const CPU_LOCK_FILE = "/tmp/bench-cpu.lock";

export interface HeldLock {
  waitedMs: number;
  release: () => void;
}

export function acquireCpuLock(onWaiting: () => void, file = CPU_LOCK_FILE): Promise<HeldLock> {
  const started = Date.now();
  const child = spawn("flock", [file, "sh", "-c", "echo locked; exec cat >/dev/null"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const waiting = setTimeout(onWaiting, 1_000);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) =>
      reject(new Error(`flock ${file} exited (${code}) before the lock was held`)),
    );
    child.stdout.once("data", () => {
      clearTimeout(waiting);
      child.removeAllListeners("exit");
      resolve({
        waitedMs: Date.now() - started,
        // cat ends at end of input, and with it the last holder of the lock's file descriptor.
        release: () => child.stdin.end(),
      });
    });
  }).finally(() => clearTimeout(waiting)) as Promise<HeldLock>;
}
