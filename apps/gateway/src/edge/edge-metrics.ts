import { Counter, Histogram, type Registry } from "prom-client";
import { METRIC_PREFIX } from "../metrics.js";

export type EdgeMetrics = ReturnType<typeof createEdgeMetrics>;

/** Counters of the edge data path (README "Metrics"). */
export function createEdgeMetrics(registry: Registry) {
  const registers = [registry];
  return {
    accepted: new Counter({
      name: `${METRIC_PREFIX}edge_messages_total`,
      help: "Edge messages accepted, by protocol message type",
      labelNames: ["type"] as const,
      registers,
    }),
    rejected: new Counter({
      name: `${METRIC_PREFIX}rejected_messages_total`,
      help: "Edge messages rejected (and not redelivered), by message type and reason",
      labelNames: ["type", "reason"] as const,
      registers,
    }),
    consumeRestarts: new Counter({
      name: `${METRIC_PREFIX}ef_up_consume_restarts_total`,
      help: "EF_UP consumes replaced because they stopped asking for messages while work waited (judgeIngestProgress)",
      registers,
    }),
    desiredDeltas: new Counter({
      name: `${METRIC_PREFIX}desired_deltas_total`,
      help: "DesiredDeltas sent to nodes, by path (publish = on change, hello = at (re)connect)",
      labelNames: ["via"] as const,
      registers,
    }),
    credentialsIssued: new Counter({
      name: `${METRIC_PREFIX}node_credentials_issued_total`,
      help: "Node credentials re-issued because a node spoke on subjects that are not its current ones (hello: in a HelloReply to a node of subject layout 1 or one moved to another site; push: on the downlink of a moved node)",
      labelNames: ["via"] as const,
      registers,
    }),
    desiredFullLists: new Counter({
      name: `${METRIC_PREFIX}desired_full_lists_total`,
      help: "Re-lists: the whole desired state sent again to a node that had applied a revision (it reported one the control plane never gave it, or lost its state); a first sync is not one, a reconnect must not raise it",
      labelNames: ["via"] as const,
      registers,
    }),
    livenessUpdates: new Counter({
      name: `${METRIC_PREFIX}liveness_updates_total`,
      help: "UPDATE statements written by the heartbeat batcher (one per flush)",
      registers,
    }),
    livenessRows: new Counter({
      name: `${METRIC_PREFIX}liveness_rows_total`,
      help: "Node rows those UPDATEs changed (status change or stale last_seen_at only)",
      registers,
    }),
    markedOffline: new Counter({
      name: `${METRIC_PREFIX}nodes_marked_offline_total`,
      help: "Nodes the offline sweeper marked offline",
      registers,
    }),
    disconnectEvents: new Counter({
      name: `${METRIC_PREFIX}disconnect_events_total`,
      help: "Servers' DISCONNECT events of node connections, by outcome (offline, no_change: reconnected or not online; or why refused)",
      labelNames: ["outcome"] as const,
      registers,
    }),
    mimirWrites: new Counter({
      name: `${METRIC_PREFIX}mimir_writes_total`,
      help: "Remote-write requests to Mimir, by result",
      labelNames: ["result"] as const,
      registers,
    }),
    mimirSamples: new Counter({
      name: `${METRIC_PREFIX}mimir_samples_total`,
      help: "Samples written to Mimir",
      registers,
    }),
    artifactChunks: new Counter({
      name: `${METRIC_PREFIX}artifact_chunks_total`,
      help: "Artifact chunk requests answered, by result (ok or the typed error sent), or dropped_stale (waited past the agents' timeout)",
      labelNames: ["result"] as const,
      registers,
    }),
    artifactBytesServed: new Counter({
      name: `${METRIC_PREFIX}artifact_bytes_served_total`,
      help: "Artifact bytes sent to nodes, by organization id",
      labelNames: ["org"] as const,
      registers,
    }),
    artifactCacheFills: new Counter({
      name: `${METRIC_PREFIX}artifact_cache_fills_total`,
      help: "Artifacts copied from an organization's object store bucket into the gateway's disk cache, by result",
      labelNames: ["result"] as const,
      registers,
    }),
    mimirWriteSeconds: new Histogram({
      name: `${METRIC_PREFIX}mimir_write_seconds`,
      help: "Duration of one remote-write request",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
  };
}
