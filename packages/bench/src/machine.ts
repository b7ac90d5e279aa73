import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  os: string;
  node: string;
  date: string;
}

export function describeMachine(): MachineInfo {
  const os = (() => {
    try {
      return /^PRETTY_NAME="?([^"\n]*)/m.exec(readFileSync("/etc/os-release", "utf8"))?.[1] ?? "unknown";
    } catch {
      return "unknown";
    }
  })();
  return {
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    kernel: release(),
    os,
    node: process.version,
    date: new Date().toISOString(),
  };
}

/** The versions a reader needs to compare runs (git commit of the code measured). */
export function gitCommit(repoRoot: string): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}
