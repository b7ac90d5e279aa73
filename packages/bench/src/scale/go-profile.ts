import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { promisify } from "node:util";

/**
 * Where a Go process's CPU went (the hub nats-server, through its `prof_port`): a pprof CPU
 * profile over a window, read with `go tool pprof -top` (the profile carries its symbols, so the
 * binary is not needed). Two views: by own time (flat) and by time including callees (cum), the
 * latter says which of the server's paths (JetStream, leaf links, client delivery) costs what.
 */
export interface GoProfileSummary {
  /** Profiled wall time, ms. */
  windowMs: number;
  /** CPU time sampled in it, ms (may exceed windowMs: several threads). */
  busyMs: number;
  flat: GoProfileEntry[];
  cumulative: GoProfileEntry[];
}

export interface GoProfileEntry {
  fn: string;
  ms: number;
  /** Share of busyMs. */
  percent: number;
}

const execFileAsync = promisify(execFile);

export async function takeGoCpuProfile(profileUrl: string, seconds: number, file: string): Promise<void> {
  const response = await fetch(new URL(`/debug/pprof/profile?seconds=${seconds}`, profileUrl), {
    signal: AbortSignal.timeout((seconds + 60) * 1000),
  });
  if (!response.ok) throw new Error(`${profileUrl} answered ${response.status} to the CPU profile`);
  writeFileSync(file, Buffer.from(await response.arrayBuffer()));
}

export async function summarizeGoProfile(
  file: string,
  windowMs: number,
  topN = 30,
): Promise<GoProfileSummary> {
  const top = async (cumulative: boolean) =>
    (
      await execFileAsync(
        "go",
        ["tool", "pprof", "-top", `-nodecount=${topN}`, ...(cumulative ? ["-cum"] : []), file],
        {
          maxBuffer: 16 * 1024 * 1024,
        },
      )
    ).stdout;
  const [flatText, cumText] = await Promise.all([top(false), top(true)]);
  const busyMs = totalMs(flatText);
  return {
    windowMs,
    busyMs,
    flat: parseTop(flatText, "flat", busyMs),
    cumulative: parseTop(cumText, "cum", busyMs),
  };
}

/** `Showing nodes accounting for 1.2s, 80% of 1.5s total` → 1500. */
export function totalMs(text: string): number {
  const match = /of ([\d.]+)(ms|s|min|h) total/.exec(text);
  return match ? durationMs(match[1] ?? "0", match[2] ?? "ms") : 0;
}

/** Rows of `go tool pprof -top`: `flat flat% sum% cum cum% name`. */
export function parseTop(text: string, column: "flat" | "cum", busyMs: number): GoProfileEntry[] {
  const entries: GoProfileEntry[] = [];
  for (const line of text.split("\n")) {
    // A zero has no unit ("0     0%"): most rows of the cumulative view start so.
    const row =
      /^\s*([\d.]+)(ms|s|min|h)?\s+[\d.]+%\s+[\d.]+%\s+([\d.]+)(ms|s|min|h)?\s+[\d.]+%\s+(.+)$/.exec(line);
    if (!row) continue;
    const ms =
      column === "flat"
        ? durationMs(row[1] ?? "0", row[2] ?? "ms")
        : durationMs(row[3] ?? "0", row[4] ?? "ms");
    const fn = (row[5] ?? "").trim();
    entries.push({ fn, ms, percent: busyMs > 0 ? (ms * 100) / busyMs : 0 });
  }
  return entries;
}

function durationMs(value: string, unit: string): number {
  return Math.round(inUnit(value, unit) * 1000) / 1000;
}

function inUnit(value: string, unit: string): number {
  const number = Number(value);
  switch (unit) {
    case "s":
      return number * 1000;
    case "min":
      return number * 60_000;
    case "h":
      return number * 3_600_000;
    default:
      return number;
  }
}

/**
 * Where a Go process's memory is (the hub's and a leaf's `prof_port`): the heap in use by
 * allocation site (`go tool pprof -sample_index=inuse_space -top`) and the runtime's own figures
 * (`/debug/pprof/heap?debug=1`): goroutine stacks are not in the heap profile, and a nats-server
 * holds two goroutines per client connection.
 */
export interface GoHeapSummary {
  /** Bytes in heap spans in use (HeapInuse: live objects and the garbage not yet swept). */
  heapInuseBytes: number;
  /** Bytes of goroutine stacks (StackInuse). */
  stackBytes: number;
  /** Bytes obtained from the OS (Sys). */
  sysBytes: number;
  goroutines: number | null;
  /** Live bytes sampled by allocation site, the largest first. */
  top: GoHeapEntry[];
  /** Live bytes the profile accounts for. */
  sampledBytes: number;
}

export interface GoHeapEntry {
  fn: string;
  bytes: number;
  percent: number;
}

/** Writes the heap profile to `file`; returns the runtime's figures and the goroutine count. */
export async function takeGoHeapProfile(
  profileUrl: string,
  file: string,
): Promise<{ memStatsText: string; goroutines: number | null }> {
  const get = async (path: string) => {
    const response = await fetch(new URL(path, profileUrl), { signal: AbortSignal.timeout(60_000) });
    if (!response.ok) throw new Error(`${profileUrl} answered ${response.status} to ${path}`);
    return response;
  };
  writeFileSync(file, Buffer.from(await (await get("/debug/pprof/heap")).arrayBuffer()));
  const memStatsText = await (await get("/debug/pprof/heap?debug=1")).text();
  const goroutineText = await (await get("/debug/pprof/goroutine?debug=1")).text();
  const goroutines = /goroutine profile: total (\d+)/.exec(goroutineText)?.[1];
  return { memStatsText, goroutines: goroutines ? Number(goroutines) : null };
}

export async function summarizeGoHeap(
  file: string,
  taken: { memStatsText: string; goroutines: number | null },
  topN = 15,
): Promise<GoHeapSummary> {
  const { stdout } = await execFileAsync(
    "go",
    ["tool", "pprof", "-sample_index=inuse_space", "-top", `-nodecount=${topN}`, file],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const stats = memStats(taken.memStatsText);
  const sampledBytes = totalBytes(stdout);
  return {
    heapInuseBytes: stats.HeapInuse ?? 0,
    stackBytes: stats.Stack ?? 0,
    sysBytes: stats.Sys ?? 0,
    goroutines: taken.goroutines,
    top: parseTopBytes(stdout, sampledBytes),
    sampledBytes,
  };
}

/** The `# Name = value` lines of `/debug/pprof/heap?debug=1` (`# Stack = inuse / sys`: the first). */
export function memStats(debugText: string): Record<string, number> {
  const stats: Record<string, number> = {};
  for (const match of debugText.matchAll(/^# (\w+) = (\d+)/gm)) stats[match[1] ?? ""] = Number(match[2]);
  return stats;
}

/** `Showing nodes accounting for 50553.93kB, 100% of 50553.93kB total` → bytes. */
export function totalBytes(text: string): number {
  const match = /of ([\d.]+)(B|kB|MB|GB) total/.exec(text);
  return match ? inBytes(match[1] ?? "0", match[2] ?? "B") : 0;
}

/** Rows of an inuse_space `go tool pprof -top`, flat bytes per allocation site. */
export function parseTopBytes(text: string, totalBytesSampled: number): GoHeapEntry[] {
  const entries: GoHeapEntry[] = [];
  for (const line of text.split("\n")) {
    const row =
      /^\s*([\d.]+)(B|kB|MB|GB)?\s+[\d.]+%\s+[\d.]+%\s+[\d.]+(?:B|kB|MB|GB)?\s+[\d.]+%\s+(.+)$/.exec(line);
    if (!row) continue;
    const bytes = inBytes(row[1] ?? "0", row[2] ?? "B");
    entries.push({
      fn: (row[3] ?? "").trim(),
      bytes,
      percent: totalBytesSampled > 0 ? (bytes * 100) / totalBytesSampled : 0,
    });
  }
  return entries;
}

function inBytes(value: string, unit: string): number {
  const scale = { B: 1, kB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[unit] ?? 1;
  return Math.round(Number(value) * scale);
}
