import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import { killProcessGroup, stopProcessGroup } from "../process-group.js";

/**
 * The scenario's sites: one real leaf nats-server each, configured by the site leaf bundle the
 * gateway makes for an operator (POST /internal/sites/{id}/leaf-bundle), listening on loopback.
 */

export interface SiteLeaf {
  index: number;
  siteId: string;
  name: string;
  port: number;
  url: string;
  configPath: string;
  child: ChildProcess | undefined;
}

/**
 * Starts the leaf nats-server (own process group) and waits until it accepts connections.
 * `memoryLimit` is its GOMEMLIMIT (goMemoryLimit): fifty site boxes share one machine here.
 */
export async function startLeaf(
  leaf: SiteLeaf,
  natsBin: string,
  logDir: string,
  memoryLimit: string,
): Promise<void> {
  const log = openSync(join(logDir, `leaf-${leaf.name}.log`), "a");
  const child = spawn(natsBin, ["-c", leaf.configPath], {
    stdio: ["ignore", log, log],
    detached: true,
    env: { PATH: process.env.PATH ?? "", ...goMemoryEnv(memoryLimit) },
  });
  closeSync(log);
  leaf.child = child;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`leaf ${leaf.name} exited (log: ${join(logDir, `leaf-${leaf.name}.log`)})`);
    if (await accepts(leaf.port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`leaf ${leaf.name} did not listen on ${leaf.port} within 30 s`);
}

export async function stopLeaf(leaf: SiteLeaf, graceMs = 5_000): Promise<void> {
  if (leaf.child) await stopProcessGroup(leaf.child, graceMs);
  leaf.child = undefined;
}

export function killLeaves(leaves: readonly SiteLeaf[]): void {
  for (const leaf of leaves) if (leaf.child) killProcessGroup(leaf.child);
}

/** Leaf connections the hub holds now (/leafz). */
export async function hubLeafCount(monitorUrl: string): Promise<number> {
  const response = await fetch(`${monitorUrl}/leafz`, { signal: AbortSignal.timeout(5_000) });
  if (!response.ok) return 0;
  const leafz = (await response.json()) as { leafnodes?: number };
  return leafz.leafnodes ?? 0;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * A Go process's GOMEMLIMIT for `nodes` simulated nodes or client connections: a soft limit the
 * runtime collects garbage to stay under. It is a backstop above the working set, never the
 * working set itself: a 20,000-node run with leaves limited to 32 KiB a node (their live heap is
 * more: per-client permissions and subscriptions) spent its connect phase collecting garbage and
 * stalled at 93 % online.
 */
export function goMemoryLimit(nodes: number, perNodeKiB: number, baseMiB = 64): string {
  return `${Math.ceil(baseMiB + (nodes * perNodeKiB) / 1024)}MiB`;
}

/**
 * The environment that bounds a Go process's memory: GOGC=50 (a heap goal of 1.5× the live heap
 * instead of 2×) and the GOMEMLIMIT backstop. Measured with the native hollow mode (2,000 agents,
 * 10 apps each): 136 KiB RSS an agent by default, 113 with GOGC=50.
 */
export function goMemoryEnv(memoryLimit: string): Record<string, string> {
  return { GOGC: "50", GOMEMLIMIT: memoryLimit };
}
