import { readFile, statfs } from "node:fs/promises";

export interface HostSample {
  /** CPU busy since the previous sample, per mille of all cores. */
  cpu: number;
  mu: number;
  mt: number;
  du: number;
  dt: number;
  net: Array<{ if: string; rx: number; tx: number }>;
}

export interface HostSampler {
  sample(): Promise<HostSample>;
}

/** At most this many interfaces per node: each costs two series. */
export const MAX_INTERFACES = 4;

/** Host gauges from /proc and statfs; the first CPU reading covers the time since boot. */
export class LinuxHostSampler implements HostSampler {
  private previousCpu: { busy: number; total: number } = { busy: 0, total: 0 };

  constructor(private readonly diskPath: string) {}

  async sample(): Promise<HostSample> {
    const [stat, meminfo, netdev, disk] = await Promise.all([
      readFile("/proc/stat", "utf8"),
      readFile("/proc/meminfo", "utf8"),
      readFile("/proc/net/dev", "utf8"),
      statfs(this.diskPath),
    ]);
    const cpu = parseCpu(stat);
    const busy = cpu.busy - this.previousCpu.busy;
    const total = cpu.total - this.previousCpu.total;
    this.previousCpu = cpu;
    const memory = parseMemory(meminfo);
    return {
      cpu: total > 0 ? Math.min(1000, Math.max(0, Math.round((busy * 1000) / total))) : 0,
      mu: memory.used,
      mt: memory.total,
      du: (disk.blocks - disk.bfree) * disk.bsize,
      dt: disk.blocks * disk.bsize,
      net: parseNetDev(netdev),
    };
  }
}

/** Aggregate jiffies of the "cpu" line: busy = everything but idle and iowait. */
export function parseCpu(procStat: string): { busy: number; total: number } {
  const line = procStat.split("\n").find((candidate) => candidate.startsWith("cpu "));
  if (!line) throw new Error("/proc/stat has no aggregate cpu line");
  const values = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = values.reduce((sum, value) => sum + value, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

/** used = MemTotal − MemAvailable, bytes. */
export function parseMemory(meminfo: string): { used: number; total: number } {
  const field = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(meminfo)?.[1] ?? 0) * 1024;
  const total = field("MemTotal");
  return { used: Math.max(0, total - field("MemAvailable")), total };
}

/** Cumulative rx/tx bytes per interface, `lo` skipped, the first MAX_INTERFACES by name. */
export function parseNetDev(netdev: string): Array<{ if: string; rx: number; tx: number }> {
  const interfaces: Array<{ if: string; rx: number; tx: number }> = [];
  for (const line of netdev.split("\n").slice(2)) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    if (name === "lo" || name.length === 0) continue;
    const fields = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    interfaces.push({ if: name.slice(0, 32), rx: fields[0] ?? 0, tx: fields[8] ?? 0 });
  }
  // Name order keeps the chosen interfaces (and so the series) stable from sample to sample.
  return interfaces.sort((a, b) => (a.if < b.if ? -1 : a.if > b.if ? 1 : 0)).slice(0, MAX_INTERFACES);
}

/** Plausible, slowly moving numbers for hollow agents (no /proc reads: thousands share one host). */
export class SyntheticHostSampler implements HostSampler {
  private rx = 0;
  private tx = 0;

  constructor(private readonly random: () => number = Math.random) {}

  async sample(): Promise<HostSample> {
    this.rx += Math.floor(this.random() * 100_000);
    this.tx += Math.floor(this.random() * 20_000);
    const gib = 1024 ** 3;
    return {
      cpu: Math.floor(this.random() * 300),
      mu: Math.floor(gib + this.random() * gib),
      mt: 4 * gib,
      du: 10 * gib,
      dt: 32 * gib,
      net: [{ if: "eth0", rx: this.rx, tx: this.tx }],
    };
  }
}
