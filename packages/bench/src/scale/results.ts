import type { MachineInfo } from "../machine.js";
import type { ComponentSample, PhaseUsage } from "../proc.js";
import type { LatencySummary } from "../stats.js";
import type { ApiPhaseResult } from "./api-slo.js";
import type { ProfileSummary } from "./cpu-profile.js";
import type { GeneratorCost } from "./go-hollow.js";
import type { GoHeapSummary, GoProfileSummary } from "./go-profile.js";
import type { CostPerNode } from "./measure.js";

/**
 * The gateway's, the hub's and one site leaf's CPU profiles over one window; null where one could
 * not be taken (results from before the leaf was profiled have no `leaf`).
 */
export interface ProfilePair {
  gateway: (ProfileSummary & { gatewayCpuPercent: number }) | null;
  hub: GoProfileSummary | null;
  leaf?: GoProfileSummary | null;
}

/** Everything one `pnpm bench:scale` run measured: the report and charts are drawn from it. */
export interface ScaleResults {
  command: string;
  commit: string;
  natsVersion: string;
  machine: MachineInfo;
  /** 1/5/15-minute load averages at the start and the end: the machine is shared. */
  load: { start: number[]; end: number[] };
  config: {
    /** Who simulated the nodes (absent in results from before --generator: node). */
    generator?: "go" | "node";
    nodes: number;
    sites: number;
    appsPerNode: number;
    hollowProcesses: number;
    idleSeconds: number;
    rolloutBatches: number;
    churnPercent: number;
    churnPeriodSeconds: number;
    churnCycles: number;
    heartbeatSeconds: number;
    metricsSeconds: number;
    /** GOMEMLIMIT of each site leaf and each Go generator process (absent before they had one). */
    memoryLimits?: { leaf: string; generator: string | null };
  };
  enrollment: { enrolled: number; failures: number; seconds: number; perSecond: number };
  desiredApps: { instances: number; seconds: number };
  connect: {
    online: number;
    allOnlineSeconds: number | null;
    appsRunning: number;
    allRunningSeconds: number | null;
  };
  fleetSeries: Array<{ seconds: number; count: number; series: string }>;
  latency: Record<string, LatencySummary | null>;
  latencyCurves: Array<{ metric: string; percentile: number; ms: number }>;
  idle: {
    windowSeconds: number;
    /** What the agents' connections sent their leaves (sum over the leaves' /connz is not
     * available: leaves have no monitor port), so measured at the hub: bytes the leaves sent it. */
    uplinkBytesPerNodePerMinute: number | null;
    uplinkKbitPerSecond: number | null;
    hubMsgsPerSecond: number;
    hubVarz: Record<string, number>;
    cost: CostPerNode;
    mimirActiveSeries: number | null;
    mimirPssMiB: number | null;
  };
  rollout: {
    nodes: number;
    batches: number;
    status: string;
    seconds: number | null;
    running: number;
  } | null;
  hubRestart: {
    serverDownMs: number;
    leavesBackMs: number | null;
    /** Nodes heard from (last_seen_at) after the hub was back, and when the last one was. */
    heardAgain: number;
    heardAllSeconds: number | null;
    offlineMarked: number;
    fullLists: number;
    hellos: number;
  } | null;
  leafRestart: {
    site: string;
    siteNodes: number;
    resynced: number;
    resyncedAllSeconds: number | null;
    otherSitesOffline: number;
    otherSitesHellos: number;
  } | null;
  churn: {
    cycles: number;
    nodesPerCycle: number;
    memorySlopes: Array<{ component: string; pssMiBPerHour: number; minutes: number }>;
  } | null;
  generators: GeneratorCost[];
  /** The gateway's V8 CPU profile over an idle window, and the hub's /varz beside it. */
  gatewayProfile: (ProfileSummary & { gatewayCpuPercent: number }) | null;
  /** The hub nats-server over the same window (absent in reports written before it was taken). */
  hubProfile?: GoProfileSummary | null;
  /** One site leaf's, over the same idle window (absent before leaves were profiled). */
  leafProfile?: GoProfileSummary | null;
  /**
   * Where the hub's and the profiled leaf's memory is at the end of the idle window, with the nodes
   * each served then (absent before memory was profiled).
   */
  memoryProfiles?: {
    hub: GoHeapSummary | null;
    leaf: GoHeapSummary | null;
    nodes: number;
    leafNodes: number;
  } | null;
  /** Both over the rollout's first minute (absent in reports written before it was taken). */
  rolloutProfile?: ProfilePair | null;
  /** The single-object API calls during idle and churn (absent in runs before they were measured). */
  api?: ApiPhaseResult[];
  usage: PhaseUsage[];
  timeline: ComponentSample[];
  gatewayCounters: Record<string, number>;
  problems: string[];
  notes: string[];
}
