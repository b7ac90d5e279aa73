import type { MachineInfo } from "../machine.js";
import type { ComponentSample, PhaseUsage } from "../proc.js";
import type { LatencySummary } from "../stats.js";
import type { BatchMeasurement, UpdatedTwice } from "./measure.js";

/** What one `pnpm bench:rollout` run measured (var/bench/rollout-results.json, beside the report). */

export interface HubTraffic {
  /** The hub's /varz totals over the run: every byte clients sent it and it sent them. */
  inBytes: number;
  outBytes: number;
  /** What the hub delivered to the hollow agents' connections (/connz, names `rollout-…`). */
  toAgentsBytes: number;
  /** Artifact bytes the agents had to fetch: nodes dispatched × artifact size. */
  artifactBytes: number;
}

export interface KillMeasurement {
  /** Plan batch (0-based) during which the gateway was killed. */
  batch: number;
  /** Seconds after the start of the rollout. */
  atSeconds: number;
  /** Of that batch's dispatched nodes, how many ran the version when the kill came. */
  batchRunningAtKill: number;
  batchNodes: number;
  /** Kill → the new gateway process answered /readyz. */
  gatewayReadySeconds: number;
  /** Kill → the first rollout step of the new controller that wrote something (its first event). */
  resumeSeconds: number | null;
  resumeEvent: string | null;
  leaseMs: number;
}

export interface RolloutRun {
  name: string;
  versionLabel: string;
  /** Nodes in the target when the rollout started. */
  nodes: number;
  status: string;
  /** Start action → the rollout completed (status); null when it did not within the timeout. */
  wallSeconds: number | null;
  batches: BatchMeasurement[];
  toRunning: LatencySummary | null;
  /** The gateway (it runs the controller, answers the artifact chunks and takes the reports). */
  controllerCpuSeconds: number;
  controllerCpuPercentMean: number;
  hub: HubTraffic;
  updatedTwice: UpdatedTwice;
  leftBehind: number;
  kill: KillMeasurement | null;
  /** The machine's 1-minute load average when the rollout started and when it ended (2 cores, shared). */
  loadAverage?: [number, number];
  /** Nodes running the version, by second since the start. */
  runningSeries: Array<{ seconds: number; count: number }>;
}

export interface RolloutBenchResults {
  command: string;
  commit: string;
  natsVersion: string;
  machine: MachineInfo;
  config: {
    nodes: number;
    hollowProcesses: number;
    batches: number;
    artifactBytes: number;
    chunkBytes: number;
    rolloutTickMs: number;
    leaseMs: number;
    timeoutSeconds: number;
  };
  enrollment: { enrolled: number; failures: number; seconds: number; perSecond: number };
  online: { nodes: number; seconds: number };
  runs: RolloutRun[];
  usage: PhaseUsage[];
  timeline: ComponentSample[];
  problems: string[];
  notes: string[];
}

/** Targets from issue 10 (the Kubernetes pod-startup SLO KubeEdge met at 100,000 nodes). */
export const ROLLOUT_TARGETS = { p99Ms: 5_000, updatedTwice: 0, leftBehind: 0 } as const;
