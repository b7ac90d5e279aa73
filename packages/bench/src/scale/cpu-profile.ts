/**
 * Where a process's CPU went, from a V8 `.cpuprofile` (node --cpu-prof): self time per function and
 * per package, counting only samples after `skipMs` (the gateway's start-up is not idle cost).
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Profiled time counted (after skipMs), ms. */
  windowMs: number;
  /** CPU time in that window (not idle), ms. */
  busyMs: number;
  top: Array<{ fn: string; selfMs: number; percent: number }>;
  byPackage: Array<{ fn: string; selfMs: number; percent: number }>;
}

const IDLE = new Set(["(idle)", "(program)"]);

/** `node_modules/.pnpm/<name>@<version>/node_modules/<name>/…` → `<name>`; our sources by folder. */
export function packageOf(url: string): string {
  const modules = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules?.[1]) return modules[1];
  const ours = /\/(apps|packages)\/([^/]+)\//.exec(url);
  if (ours) return `${ours[1]}/${ours[2]}`;
  if (url.startsWith("node:") || url === "") return "node internals";
  return url;
}

export function summarizeProfile(profile: CpuProfile, skipMs: number, topN = 15): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfByFn = new Map<string, number>();
  const selfByPackage = new Map<string, number>();
  let at = profile.startTime;
  const from = profile.startTime + skipMs * 1000;
  let windowUs = 0;
  let busyUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < from) continue;
    windowUs += delta;
    const node = byId.get(profile.samples[i] as number);
    if (!node) continue;
    const name = node.callFrame.functionName || "(anonymous)";
    if (IDLE.has(name)) continue;
    busyUs += delta;
    const short = node.callFrame.url
      .replace(/^.*\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, "")
      .replace(/^file:\/\/.*\/(apps|packages)\//, "$1/");
    const key = `${name} (${short || "native"}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ""})`;
    selfByFn.set(key, (selfByFn.get(key) ?? 0) + delta);
    const pkg = name === "(garbage collector)" ? "(garbage collector)" : packageOf(node.callFrame.url);
    selfByPackage.set(pkg, (selfByPackage.get(pkg) ?? 0) + delta);
  }
  const rank = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, topN)
      .map(([fn, us]) => ({ fn, selfMs: us / 1000, percent: busyUs > 0 ? (us * 100) / busyUs : 0 }));
  return {
    windowMs: windowUs / 1000,
    busyMs: busyUs / 1000,
    top: rank(selfByFn),
    byPackage: rank(selfByPackage),
  };
}
