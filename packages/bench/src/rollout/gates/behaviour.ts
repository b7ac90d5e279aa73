/**
 * What each version of the benchmark's app does on a hollow node (issue 11, Measure (a)): pure
 * models of per-app CPU, memory and crashes, keyed by the version label the node runs, never by
 * the node. A node only adds its own baseline (hardware and a fixed per-node spread, from its
 * name) and every sample its noise, so that canary and baseline differ as real fleets do.
 */
import { createHash } from "node:crypto";
import type { HollowCrashes, HollowUsage } from "@edgefleet/agent-sdk";

export const BEHAVIOUR_KINDS = ["good", "cpu_hog", "memory_leak", "crash_loop"] as const;
export type BehaviourKind = (typeof BEHAVIOUR_KINDS)[number];

/** One version's behaviour: its kind, and how much more or less it uses than the model (a release's drift). */
export interface Behaviour {
  kind: BehaviourKind;
  /** Multiplies the version's CPU and memory; a good release is a few percent off the last one. */
  scale: number;
}

/** Version label → behaviour: what the driver hands the worker processes before each rollout. */
export type BehaviourTable = Record<string, Behaviour>;

export const HARDWARE = ["pi4", "nuc"] as const;
export type Hardware = (typeof HARDWARE)[number];

/**
 * The model's numbers. A good release: ~8 % of a core and ~60 MB on a pi4 (a nuc spends less CPU
 * on the same work and a little more memory). Bad ones are plainly bad but no caricature: a hog
 * triples its CPU; a leak grows by 1.5 MB/s (scaled to the benchmark's short windows: what a
 * 0.15 MB/s leak shows over a 5-minute window); a crash loop runs 15–25 s, then dies every 5–10 s
 * and is restarted 1–2 s later (the process runtime's backoff).
 */
export const APP_MODEL = {
  cpuPermille: 80,
  memoryBytes: 60e6,
  hardware: { pi4: { cpu: 1, memory: 1 }, nuc: { cpu: 0.45, memory: 1.1 } } satisfies Record<
    Hardware,
    { cpu: number; memory: number }
  >,
  /** Per-node spread of the baseline: σ of a log-normal factor (fixed per node). */
  nodeSpread: { cpu: 0.25, memory: 0.12 },
  /** Per-sample noise: relative σ of each sample around the node's level. */
  sampleNoise: { cpu: 0.2, memory: 0.02 },
  /** A good release's drift from the model: uniform within ± this. */
  releaseDrift: 0.05,
  cpuHogFactor: 3,
  leakBytesPerSecond: 1.5e6,
  crash: { firstAfterMs: [15_000, 25_000], upMs: [5_000, 10_000], downMs: [1_000, 2_000] },
} as const;

/** Node names carry their hardware (`gates-nuc-17`): the worker reads it from there. */
export function nodeName(prefix: string, hardware: Hardware): string {
  return `${prefix}-${hardware}`;
}

export function hardwareOfName(name: string): Hardware {
  return /-nuc-\d+$/.test(name) ? "nuc" : "pi4";
}

/** How many of `nodes` are of each hardware: one in four is a nuc. */
export function hardwareSplit(nodes: number): Record<Hardware, number> {
  const nuc = Math.floor(nodes / 4);
  return { pi4: nodes - nuc, nuc };
}

/** A standard normal value from two uniform ones in (0, 1] (Box–Muller). */
export function gaussian(u1: number, u2: number): number {
  return Math.sqrt(-2 * Math.log(Math.max(u1, Number.MIN_VALUE))) * Math.cos(2 * Math.PI * u2);
}

/** A node's own level relative to the model: its hardware times a fixed log-normal spread. */
export interface NodeProfile {
  hardware: Hardware;
  cpu: number;
  memory: number;
}

export function nodeProfile(name: string): NodeProfile {
  const hardware = hardwareOfName(name);
  // Four independent uniforms in (0, 1] from the name's SHA-256: neighbouring names (which the
  // rollout takes together, in enrollment order) must get unrelated levels.
  const digest = createHash("sha256").update(name).digest();
  const uniform = (i: number) => (digest.readUInt32BE(4 * (i - 1)) + 1) / 2 ** 32;
  const spread = APP_MODEL.nodeSpread;
  return {
    hardware,
    cpu: APP_MODEL.hardware[hardware].cpu * Math.exp(spread.cpu * gaussian(uniform(1), uniform(2))),
    memory: APP_MODEL.hardware[hardware].memory * Math.exp(spread.memory * gaussian(uniform(3), uniform(4))),
  };
}

/** A version the table does not name (the fleet's first version) behaves like a good one. */
const UNKNOWN: Behaviour = { kind: "good", scale: 1 };

/** Per-app usage of a node, as the hollow runtime asks for it (HollowUsage). */
export function usageModel(
  table: () => BehaviourTable,
  node: NodeProfile,
  random: () => number = Math.random,
): HollowUsage {
  return (_app, version, runningForMs) => {
    const behaviour = table()[version] ?? UNKNOWN;
    const noise = (sigma: number) => 1 + sigma * gaussian(1 - random(), random());
    const hog = behaviour.kind === "cpu_hog" ? APP_MODEL.cpuHogFactor : 1;
    const leaked =
      behaviour.kind === "memory_leak"
        ? (APP_MODEL.leakBytesPerSecond * Math.max(0, runningForMs)) / 1000
        : 0;
    return {
      cpu: Math.max(
        0,
        APP_MODEL.cpuPermille * node.cpu * behaviour.scale * hog * noise(APP_MODEL.sampleNoise.cpu),
      ),
      mem: Math.max(
        0,
        (APP_MODEL.memoryBytes * node.memory * behaviour.scale + leaked) *
          noise(APP_MODEL.sampleNoise.memory),
      ),
    };
  };
}

/** Crashes of a node's apps (HollowCrashes): only a crash-looping version crashes. */
export function crashModel(table: () => BehaviourTable, random: () => number = Math.random): HollowCrashes {
  const within = ([min, max]: readonly [number, number]) => Math.round(min + random() * (max - min));
  return (_app, version, crashes) => {
    if ((table()[version] ?? UNKNOWN).kind !== "crash_loop") return null;
    const { firstAfterMs, upMs, downMs } = APP_MODEL.crash;
    return { afterMs: within(crashes === 0 ? firstAfterMs : upMs), downMs: within(downMs) };
  };
}

/** A good release's behaviour: the model, drifted by up to ± releaseDrift. */
export function goodRelease(random: () => number = Math.random): Behaviour {
  return { kind: "good", scale: 1 + APP_MODEL.releaseDrift * (2 * random() - 1) };
}
