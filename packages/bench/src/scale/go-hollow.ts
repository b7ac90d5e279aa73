import { execFileSync, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CLOCK_TICKS_PER_SECOND, parseProcStat, parseSmapsRollup } from "../proc.js";
import { stopProcessGroup } from "../process-group.js";

/**
 * What one simulated node costs in the native agent's hollow mode (`edgefleet-agent hollow`): the
 * same protocol, one connection and credentials per node, in one Go process. Measured on a site
 * leaf beside the Node fleet, so the scenario can say which generator a 100,000 run should use.
 */

export interface GeneratorCost {
  generator: string;
  nodes: number;
  /** Nodes connected at the end of the window. */
  connected: number;
  windowSeconds: number;
  rssKiBPerNode: number;
  cpuMsPerNodePerMinute: number;
  /** Of the process before any agent (Go runtime, or Node + SDK). */
  baselineRssMiB: number;
}

export function buildNativeAgent(repoRoot: string): string {
  return execFileSync("bash", [join(repoRoot, "apps/agent/build.sh")], { encoding: "utf8" }).trim();
}

function cpuTicks(pid: number): number {
  return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8")).cpuTicks;
}

function rssKiB(pid: number): number {
  return parseSmapsRollup(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8")).rssKiB;
}

/** Runs `count` Go hollow agents on `url` for `windowSeconds` of idle after they connected. */
export async function measureGoHollow(input: {
  binary: string;
  count: number;
  token: string;
  url: string;
  enrollUrl: string;
  enrollCredsFile: string;
  windowSeconds: number;
  logFile: string;
  namePrefix: string;
  /** Called with the generator's pid once it runs (the scenario samples it). */
  onStart?: (pid: number) => void;
}): Promise<GeneratorCost> {
  const log = openSync(input.logFile, "w");
  const child = spawn(
    input.binary,
    [
      "hollow",
      "--count",
      String(input.count),
      "--token",
      input.token,
      "--url",
      input.url,
      "--enroll-url",
      input.enrollUrl,
      "--enroll-creds",
      input.enrollCredsFile,
      "--name-prefix",
      input.namePrefix,
      "--label",
      "generator=go",
    ],
    { stdio: ["ignore", log, log], detached: true },
  );
  closeSync(log);
  const pid = child.pid as number;
  input.onStart?.(pid);
  try {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const baselineRssMiB = rssKiB(pid) / 1024;
    // "hollow fleet running" once every agent was started; then let the handshakes finish.
    const deadline = Date.now() + 600_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`edgefleet-agent hollow exited (log: ${input.logFile})`);
      if (readFileSync(input.logFile, "utf8").includes("hollow fleet running")) break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    const ticksBefore = cpuTicks(pid);
    const startedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, input.windowSeconds * 1000));
    const cpuMs = ((cpuTicks(pid) - ticksBefore) * 1000) / CLOCK_TICKS_PER_SECOND;
    const minutes = (Date.now() - startedAt) / 60_000;
    const rss = rssKiB(pid);
    const lines = readFileSync(input.logFile, "utf8").split("\n");
    const connected = Number(
      /"connected":(\d+)/.exec(lines.filter((l) => l.includes('"connected"')).at(-1) ?? "")?.[1] ??
        input.count,
    );
    return {
      generator: "native agent (Go) hollow mode",
      nodes: input.count,
      connected,
      windowSeconds: Math.round(minutes * 60),
      rssKiBPerNode: (rss - baselineRssMiB * 1024) / input.count,
      cpuMsPerNodePerMinute: cpuMs / minutes / input.count,
      baselineRssMiB,
    };
  } finally {
    await stopProcessGroup(child, 10_000);
  }
}
