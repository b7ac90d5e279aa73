import type { MachineInfo } from "../machine.js";
import type { UpdatedTwice } from "../rollout/measure.js";
import type { DeliveryAccount } from "./accounting.js";

/** What one `pnpm bench:ha` run measured (docs/benchmarks/ha-chaos-results.json). */

/** The servers the scenario kills, in turn. */
export const KILL_TARGETS = ["nats", "gateway", "postgres", "mimir", "keycloak"] as const;
export type KillTarget = (typeof KILL_TARGETS)[number];

/** One second of what users and agents see (every probe bounded; null: no answer in time). */
export interface TimelineSample {
  at: number;
  /** Each gateway replica's /readyz status. */
  gateways: Array<number | null>;
  /** Each console replica's REST API (GET /api/v1/nodes/counts with an API key). */
  consoles: Array<number | null>;
  /**
   * Each console's last forced report on a node (REST POST /nodes/{id}/commands, every 5 s): the
   * console through a gateway to the node and back; 502: no answer from the node.
   */
  nodeCommands: Array<number | null>;
  /** Console 1 with a signed-in person's session (tRPC node.counts). */
  session: number | null;
  /** Keycloak's OIDC discovery (what every sign-in starts with). */
  keycloak: number | null;
  /** EF_UP's gateway consumer: messages not yet delivered plus delivered and not yet acked. */
  ingestBacklog: number | null;
  /** Reports in the agents' outboxes (waiting for a PubAck), per site: [A, B]. */
  agentBacklog: [number, number];
  /** Agents connected to their site's leaf, per site. */
  agentsConnected: [number, number];
  /** The rollout's lease is held and current (its controller steps); null: no answer. */
  controllerLeasing: boolean | null;
  /** Nodes running the rollout's version (inventory). */
  running: number | null;
  /** Nodes online (inventory). */
  online: number | null;
  loadAverage: number;
}

/** One failing probe answer, for "what users saw" (the first few per probe and kill). */
export interface Observation {
  at: number;
  probe: string;
  status: number | null;
  detail: string;
}

/** Seconds from the kill until each signal was healthy for good (null: never within the window). */
export interface Recovery {
  /** The killed server (or gateway) answers its readiness check again. */
  serverReady: number | null;
  gatewaysReady: number | null;
  consoleApi: number | null;
  /** Both consoles' node commands (through a gateway to a node) answer again. */
  nodeCommands: number | null;
  session: number | null;
  signIn: number | null;
  /** The agents of the connected site have no reports waiting beyond normal. */
  agentsDelivering: number | null;
  /** EF_UP's backlog back to normal. */
  ingestCaughtUp: number | null;
  /** The rollout controller holds its lease again. */
  controller: number | null;
  /** The slowest of the above. */
  overall: number | null;
}

export interface KillRecord {
  target: KillTarget;
  /** What exactly was killed, e.g. "nats-2 (EF_UP stream leader)". */
  what: string;
  at: number;
  /** The restart began (a supervisor's restart: at once). */
  restartedAt: number;
  readyAt: number | null;
  /** Rollout batches started when the kill came (the rollout was moving or paused between batches). */
  rolloutBatchesAtKill: number | null;
  recovery: Recovery;
  /**
   * The reports made from 10 s before the kill until the next fault (by their own time), and what
   * became of them: a fault's own losses and duplicates.
   */
  deliveries: DeliveryAccount | null;
  /** What users saw meanwhile: per probe, the failing answers counted by kind. */
  seen: Record<string, Record<string, number>>;
  observations: Observation[];
}

export interface HaRolloutOutcome {
  nodes: number;
  status: string;
  startedAt: number;
  finishedAt: number | null;
  batches: number;
  updatedTwice: UpdatedTwice;
  leftBehind: number;
  leftBehindExamples: string[];
  /** Nodes running the version over time (seconds after the start). */
  runningSeries: Array<{ seconds: number; count: number }>;
}

export interface PartitionRecord {
  site: string;
  cutAt: number;
  restoredAt: number;
  /** Reports the site's agents held when the link came back. */
  backlogAtRestore: number;
  /** Restore → the site's agents have nothing left to deliver. */
  drainedSeconds: number | null;
  /** Restore → EF_UP's backlog back to normal after the site's burst. */
  ingestedSeconds: number | null;
}

export interface HaBenchResults {
  command: string;
  commit: string;
  natsVersion: string;
  machine: MachineInfo;
  /** Load average (1 min) at the start and the end of the chaos. */
  loadAverage: [number, number];
  config: {
    nodes: number;
    sites: string[];
    natsNodes: number;
    gateways: number;
    consoles: number;
    metricsIntervalS: number;
    statusRefreshS: number;
    partitionSeconds: number;
    killSpacingSeconds: number;
    rolloutBatches: number;
  };
  /** When the chaos (steady reporting, then the partition and the rollout) began. */
  startedAt: number;
  kills: KillRecord[];
  partition: PartitionRecord;
  rollout: HaRolloutOutcome;
  /** Exactly-once accounting, per site and in total. */
  deliveries: { perSite: Record<string, DeliveryAccount>; total: DeliveryAccount };
  timeline: TimelineSample[];
  /** Things that went wrong in the run itself (not findings of the chaos). */
  problems: string[];
  notes: string[];
}
