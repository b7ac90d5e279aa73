import type { ChildProcess } from "node:child_process";

/**
 * The benchmark starts its servers as process-group leaders (detached), so a stop reaches the
 * server and whatever it spawned (pnpm → tsx → node, next start's workers).
 */

/** SIGTERM to the group (a clean shutdown), SIGKILL after `graceMs`; returns once it exited. */
export async function stopProcessGroup(child: ChildProcess, graceMs: number): Promise<void> {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => killProcessGroup(child), graceMs);
  await exited;
  clearTimeout(timer);
}

export function killProcessGroup(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}
