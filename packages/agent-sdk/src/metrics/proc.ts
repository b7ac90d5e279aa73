import { readFile } from "node:fs/promises";

/** Kernel clock ticks per second for /proc CPU times (USER_HZ, 100 on every mainstream Linux). */
const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcessSample {
  /** utime + stime, seconds. */
  cpuSeconds: number;
  /** Resident memory, bytes. */
  rssBytes: number;
}

/** CPU time and RSS of one process from /proc; null when it is gone. */
export async function sampleProcess(pid: number): Promise<ProcessSample | null> {
  try {
    const [stat, status] = await Promise.all([
      readFile(`/proc/${pid}/stat`, "utf8"),
      readFile(`/proc/${pid}/status`, "utf8"),
    ]);
    // The command name (field 2) may contain spaces and parentheses: fields start after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15, i.e. 11 and 12 after the name and state.
    const ticks = Number(fields[11]) + Number(fields[12]);
    const rssKib = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
    return { cpuSeconds: ticks / CLOCK_TICKS_PER_SECOND, rssBytes: rssKib * 1024 };
  } catch {
    return null;
  }
}

/** Per mille of one core used between two CPU-time readings `elapsedMs` apart. */
export function cpuPerMille(cpuSecondsBefore: number, cpuSecondsAfter: number, elapsedMs: number): number {
  if (elapsedMs <= 0) return 0;
  return Math.max(0, Math.round(((cpuSecondsAfter - cpuSecondsBefore) * 1_000_000) / elapsedMs));
}
