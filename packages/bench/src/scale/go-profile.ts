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
