import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** CPU and memory of process trees from /proc (Linux). */

export interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime, clock ticks. */
  cpuTicks: number;
}

/**
 * Parses /proc/<pid>/stat. The command name (field 2) is in parentheses and may hold spaces or
 * parentheses itself, so fields are counted from the last ')'.
 */
export function parseProcStat(text: string): ProcStat {
  const close = text.lastIndexOf(")");
  const pid = Number.parseInt(text, 10);
  if (close < 0 || !Number.isInteger(pid))
    throw new Error(`not a /proc/<pid>/stat line: ${text.slice(0, 80)}`);
  // After ")": state(3) ppid(4) ... utime(14) stime(15): index 0 is field 3.
  const fields = text.slice(close + 2).split(" ");
  const field = (n: number) => Number(fields[n - 3]);
  return { pid, ppid: field(4), cpuTicks: field(14) + field(15) };
}

/** Rss and Pss in KiB from /proc/<pid>/smaps_rollup text. */
export function parseSmapsRollup(text: string): { rssKiB: number; pssKiB: number } {
  const value = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);
  return { rssKiB: value("Rss"), pssKiB: value("Pss") };
}

export const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

function readAllStats(): Map<number, ProcStat> {
  const stats = new Map<number, ProcStat>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = parseProcStat(readFileSync(`/proc/${entry}/stat`, "utf8"));
      stats.set(stat.pid, stat);
    } catch {
      // exited meanwhile
    }
  }
  return stats;
}

/** The pid and all its descendants, given every process's parent. */
export function treeOf(root: number, stats: ReadonlyMap<number, ProcStat>): number[] {
  const children = new Map<number, number[]>();
  for (const stat of stats.values()) {
    const list = children.get(stat.ppid) ?? [];
    list.push(stat.pid);
    children.set(stat.ppid, list);
  }
  const tree: number[] = [];
  const queue = stats.has(root) ? [root] : [];
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

export interface ComponentSample {
  component: string;
  /** Milliseconds since the epoch. */
  at: number;
  phase: string;
  /** CPU since the previous sample, in percent of one core. */
  cpuPercent: number;
  /** Sum over the tree; Pss shares pages (e.g. Postgres shared buffers) among the processes. */
  rssMiB: number;
  pssMiB: number;
  processes: number;
}

/**
 * Samples CPU and memory of named process trees every `intervalMs`. A component's root pid is
 * looked up on each sample (a component may start after the sampler).
 */
export class ProcSampler {
  readonly samples: ComponentSample[] = [];
  private readonly lastTicks = new Map<string, { ticksByPid: Map<number, number>; at: number }>();
  private timer: NodeJS.Timeout | undefined;
  phase = "start";

  constructor(
    /** Root pids per component; with `tree`, their descendants count too. */
    private readonly components: () => Record<string, { roots: number[]; tree: boolean }>,
    private readonly intervalMs = 2_000,
  ) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  sample(): void {
    const at = Date.now();
    const stats = readAllStats();
    for (const [component, { roots, tree }] of Object.entries(this.components())) {
      const pids = roots.flatMap((root) => (tree ? treeOf(root, stats) : stats.has(root) ? [root] : []));
      if (pids.length === 0) continue;
      const previous = this.lastTicks.get(component);
      const ticksByPid = new Map<number, number>();
      // Per process: a process that started since the last sample counts in full, one that
      // exited takes only its last interval along (a tree sum would go backwards then).
      let ticks = 0;
      let rssKiB = 0;
      let pssKiB = 0;
      for (const pid of pids) {
        const pidTicks = stats.get(pid)?.cpuTicks ?? 0;
        ticksByPid.set(pid, pidTicks);
        ticks += pidTicks - (previous?.ticksByPid.get(pid) ?? 0);
        try {
          const memory = parseSmapsRollup(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
          rssKiB += memory.rssKiB;
          pssKiB += memory.pssKiB;
        } catch {
          // exited meanwhile
        }
      }
      this.lastTicks.set(component, { ticksByPid, at });
      if (!previous || at <= previous.at) continue;
      const cpuSeconds = Math.max(0, ticks) / CLOCK_TICKS_PER_SECOND;
      this.samples.push({
        component,
        at,
        phase: this.phase,
        cpuPercent: (cpuSeconds * 100_000) / (at - previous.at),
        rssMiB: rssKiB / 1024,
        pssMiB: pssKiB / 1024,
        processes: pids.length,
      });
    }
  }
}

export interface PhaseUsage {
  component: string;
  phase: string;
  cpuPercentMean: number;
  cpuPercentMax: number;
  rssMiBMax: number;
  pssMiBMax: number;
}

/** Mean/max CPU and peak memory per component and phase. */
export function usageByPhase(samples: readonly ComponentSample[]): PhaseUsage[] {
  const groups = new Map<string, ComponentSample[]>();
  for (const sample of samples) {
    const key = `${sample.component}\u0000${sample.phase}`;
    const list = groups.get(key) ?? [];
    list.push(sample);
    groups.set(key, list);
  }
  return [...groups.values()].map((list) => {
    const first = list[0] as ComponentSample;
    return {
      component: first.component,
      phase: first.phase,
      cpuPercentMean: list.reduce((sum, s) => sum + s.cpuPercent, 0) / list.length,
      cpuPercentMax: Math.max(...list.map((s) => s.cpuPercent)),
      rssMiBMax: Math.max(...list.map((s) => s.rssMiB)),
      pssMiBMax: Math.max(...list.map((s) => s.pssMiB)),
    };
  });
}

/** The newest sample of each component in one line, e.g. "gateway 81% 412 MiB · postgres 9% 310 MiB". */
export function latestUsageLine(samples: readonly ComponentSample[]): string {
  const latest = new Map<string, ComponentSample>();
  for (const sample of samples) latest.set(sample.component, sample);
  return [...latest.values()]
    .map((s) => `${s.component} ${Math.round(s.cpuPercent)}% ${Math.round(s.rssMiB)} MiB`)
    .join(" · ");
}

/** Summed RSS of the given processes right now, KiB (0 for those gone). */
export function rssKiBOf(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += parseSmapsRollup(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8")).rssKiB;
    } catch {
      // gone
    }
  }
  return total;
}
