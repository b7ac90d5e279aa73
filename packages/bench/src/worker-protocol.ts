/** Messages between the benchmark driver and its hollow-agent worker processes (Node IPC). */
import type { NodeDeliveries } from "./delivery-ledger.js";
import type { BehaviourTable } from "./rollout/gates/behaviour.js";

export interface EnrollCommand {
  type: "enroll";
  /** Global index of this worker's first node; names are `${namePrefix}-${index}`. */
  firstIndex: number;
  count: number;
  token: string;
  natsUrl: string;
  /** Where the agents connect when not `natsUrl` (site leaves): node `i` uses `agentUrls[i % length]`. */
  agentUrls?: string[];
  /**
   * Per site leaf, its site's enrollment token (node `i` uses `agentTokens[i % length]`): a node's
   * credentials name its site, and a site's leaf carries only that site's nodes (issue 8 #2).
   */
  agentTokens?: string[];
  enrollCreds: string;
  namePrefix: string;
  concurrency: number;
  /** Agents really download artifacts (chunks over NATS, SHA-256 checked) instead of simulating it. */
  fetchArtifacts?: boolean;
  /** A status report also goes out this often without a change (the agent's default: 600 s). */
  statusRefreshSeconds?: number;
  /**
   * Per-app CPU, memory and crashes modelled by version (rollout/gates/behaviour.ts, the table set
   * by "behaviours"); default off: no per-app series, no crashes.
   */
  appModels?: boolean;
}

export type ToWorker =
  | EnrollCommand
  /** Start every enrolled agent, at most `perSecond` a second and `maxInFlight` handshakes at once. */
  | { type: "connect"; perSecond: number; maxInFlight: number }
  | { type: "stop"; nids: string[] }
  | { type: "restart"; nids: string[] }
  /** From now, note when each running agent gets its next Hello answered (a reconnect); reply
   * "hellos" once every one has, or after `timeoutMs` with those that have. */
  | { type: "watch-hellos"; timeoutMs: number; nids?: string[] }
  /** The behaviour of each version label (for agents enrolled with `appModels`); reply "behaviours-set". */
  | { type: "behaviours"; table: BehaviourTable }
  /** Reply "updates": per node, how many times its runtime was told to switch to each version. */
  | { type: "updates" }
  /** Reply "deliveries": per node, every report whose PubAck its agent got (delivery-ledger.ts). */
  | { type: "deliveries" }
  | { type: "shutdown" };

export interface NodeTime {
  nid: string;
  /** Date.now() of the event. */
  at: number;
}

export type FromWorker =
  | { type: "ready" }
  | {
      type: "progress";
      enrolled: number;
      started: number;
      connected: number;
      /** Reports in the running agents' outboxes, waiting for their PubAck. */
      backlog: number;
      /** Reports acknowledged so far (all agents, since start). */
      delivered: number;
    }
  | { type: "enrolled"; nodes: Array<{ nid: string; name: string }>; failures: number; firstError?: string }
  /** Agents handed to Agent.start (it connects in the background) and when. */
  | { type: "started"; nodes: NodeTime[] }
  | { type: "stopped"; nodes: NodeTime[] }
  | { type: "restarted"; nodes: NodeTime[] }
  | { type: "hellos"; nodes: NodeTime[]; watched: number }
  | { type: "updates"; nodes: NodeUpdates[] }
  | { type: "deliveries"; nodes: NodeDeliveries[] }
  | { type: "behaviours-set" }
  | { type: "error"; message: string };

/** Version switches one hollow node's runtime was told to make (version label → times). */
export interface NodeUpdates {
  nid: string;
  switches: Record<string, number>;
}
