import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { basename, join } from "node:path";
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

/** Asks the gateway for a site's leaf bundle and writes leaf.conf, site.creds and its companions under `dir`. */
export async function writeLeafBundle(input: {
  gatewayUrl: string;
  internalToken: string;
  organizationId: string;
  siteId: string;
  name: string;
  port: number;
  dir: string;
}): Promise<{ configPath: string }> {
  const siteDir = join(input.dir, input.name);
  mkdirSync(siteDir, { recursive: true, mode: 0o700 });
  const credentialsPath = join(siteDir, "site.creds");
  const response = await fetch(`${input.gatewayUrl}/internal/sites/${input.siteId}/leaf-bundle`, {
    method: "POST",
    headers: { authorization: `Bearer ${input.internalToken}`, "content-type": "application/json" },
    body: JSON.stringify({
      organizationId: input.organizationId,
      listen: `127.0.0.1:${input.port}`,
      credentialsPath,
      // The scenario measures the control plane: its leaves run no site artifact cache.
      siteCache: null,
    }),
    signal: AbortSignal.timeout(30_000),
  });
  if (!response.ok)
    throw new Error(`leaf bundle of ${input.name}: HTTP ${response.status} ${await response.text()}`);
  const bundle = (await response.json()) as {
    config: string;
    creds: string;
    companions?: Record<string, string>;
  };
  const configPath = join(siteDir, "leaf.conf");
  writeFileSync(configPath, bundle.config, { mode: 0o600 });
  writeFileSync(credentialsPath, bundle.creds, { mode: 0o600 });
  // The config's other remotes (the site's system link, the enrollment account) read these: a leaf
  // without them redials the hub every second for each, and the hub pays for every attempt.
  for (const [file, content] of Object.entries(bundle.companions ?? {}))
    writeFileSync(join(siteDir, basename(file)), content, { mode: 0o600 });
  return { configPath };
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
