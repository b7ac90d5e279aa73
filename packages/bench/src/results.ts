import type { MachineInfo } from "./machine.js";
import type { ComponentSample, PhaseUsage } from "./proc.js";
import { type LatencySummary, percentile as percentile_ } from "./stats.js";

/** Everything one benchmark run measured: what the report and the charts are drawn from. */
export interface BenchResults {
  command: string;
  commit: string;
  natsVersion: string;
  machine: MachineInfo;
  config: {
    nodes: number;
    hollowProcesses: number;
    connectPerSecond: number;
    /** Per worker process: handshakes in flight at once (absent in older results). */
    connectInFlight?: number;
    idleSeconds: number;
    restartSample: number;
    heartbeatSeconds: number;
    metricsSeconds: number;
    livenessFlushMs: number;
  };
  enrollment: { enrolled: number; failures: number; seconds: number; perSecond: number };
  /** Cumulative enrolled and online nodes, seconds since enrollment began. */
  fleetSeries: Array<{ seconds: number; count: number; series: "enrolled" | "online" }>;
  latency: {
    /** Agent started (connects) → node online in Postgres. */
    connectToOnline: LatencySummary | null;
    /** setDesiredApps committed → app instance `running` in Postgres. */
    desiredToRunning: LatencySummary | null;
    /** Agent stopped → node offline in Postgres (the sweeper's bound is 3 heartbeats + slack). */
    stopToOffline: LatencySummary | null;
    /** Agent restarted after being offline → node online again in Postgres. */
    restartToOnline: LatencySummary | null;
  };
  /** For the distribution chart: the value at each whole percentile 0..100, per metric. */
  latencyCurves: Array<{ metric: string; percentile: number; ms: number }>;
  offlineBoundMs: number;
  rollout: { nodes: number; seconds: number; setPerSecond: number; allRunningSeconds: number };
  allOnlineSeconds: number;
  /** Agents started per second as admission control let them (first to last start). */
  connectStartedPerSecond?: number;
  idleUplink: {
    windowSeconds: number;
    connections: number;
    inBytes: number;
    outBytes: number;
    inMsgs: number;
    bytesPerMinute: number;
    kbitPerSecond: number;
    msgsPerMinute: number;
    outBytesPerMinute: number;
  } | null;
  /** The hub nats-server restarted with the whole fleet online (absent in older results). */
  reconnectStorm?: {
    /** Running agents when the server went down. */
    nodes: number;
    /** Agents whose Hello was answered again (reconnected and resynced). */
    resynced: number;
    /** Server stopped → healthy again (the outage every agent saw). */
    serverDownMs: number;
    /** Server stopped → the last agent's Hello answered. */
    convergedSeconds: number | null;
    /** Per node: server stopped → its Hello answered again. */
    resync: LatencySummary | null;
    /** Gateway counters across the storm (deltas). */
    fullLists: number;
    helloDeltas: number;
    hellos: number;
  };
  usage: PhaseUsage[];
  timeline: ComponentSample[];
  /** (Worker RSS when idle − worker RSS before any agent) / nodes. */
  hollowRssKiBPerNode: number | null;
  /** RSS of all worker processes before any agent existed. */
  hollowBaselineMiB: number;
  referenceAgent: Array<{
    variant: string;
    rssMiBLast: number;
    rssMiBMax: number;
    anonymousMiB?: number;
    fileBackedMiB?: number;
    pssMiB?: number;
  }>;
  /** An empty Node process on this machine: the floor under any Node agent. */
  emptyNodeMemory?: { rssMiB: number; anonymousMiB: number; fileBackedMiB: number };
  gatewayCounters: Record<string, number>;
  /** What did not hold, or did not finish, in this run. */
  problems: string[];
  /** Written by whoever ran it (`--note`): context the run cannot measure. */
  notes: string[];
}

export const TARGETS = { idleUplinkKbitPerSecond: 0.05, agentRssMiB: 40, stormSeconds: 60 } as const;

/** The values at whole percentiles 0..100 of sorted samples (nearest rank). */
export function percentileCurve(metric: string, samples: readonly number[]) {
  if (samples.length === 0) return [];
  const sorted = [...samples].sort((a, b) => a - b);
  return Array.from({ length: 101 }, (_, percentile) => ({
    metric,
    percentile,
    ms: percentile_(sorted, percentile),
  }));
}
