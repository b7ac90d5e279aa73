/**
 * The rollout as the live page shows it: per batch (forward, then rollback), where each node
 * stands now, with the same outcome rules the decider uses, and the late joiners counted apart.
 */
import type { InstanceState, ObservedNode } from "./nodes";
import { forwardOutcome, type NodeOutcome, rollbackOutcome, tallyOutcomes } from "./outcomes";
import type { BatchProgress, BatchTally, Phase, RolloutState } from "./state";
import { resolveBatchPolicy } from "./strategy";
import type { EpochMs } from "./time";

export interface NodeView {
  nodeId: string;
  /** "not_started" while the node's batch has not started. */
  outcome: NodeOutcome | "not_started";
  /** What its agent reports (pulling, starting, ...), null without an instance or report. */
  instanceState: InstanceState | null;
  online: boolean;
  /** Dispatched after its batch was over (it was offline then) or as a late joiner. */
  caughtUp: boolean;
}

export interface BatchView {
  phase: Phase;
  index: number;
  /** `stopped`: it was running when the rollout was aborted or rolled back. */
  status: "pending" | "running" | "succeeded" | "failed" | "stopped";
  startedAt: EpochMs | null;
  finishedAt: EpochMs | null;
  /** Why it finished the way it did. */
  reason: string | null;
  /** The counts that decided the verdict (null until it finished). */
  verdictTally: BatchTally | null;
  /** Counts now (nodes caught up since the verdict show here). */
  liveTally: BatchTally;
  nodes: NodeView[];
}

export interface RolloutView {
  batches: BatchView[];
  /** Nodes that joined the target after planning: dispatched as they come. */
  lateJoiners: NodeView[];
  rollback: BatchView[] | null;
}

export function rolloutView(state: RolloutState, nodes: readonly ObservedNode[], now: EpochMs): RolloutView {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const dispatches = new Map(state.dispatches.map((d) => [d.nodeId, d]));
  const planned = new Set(state.plan?.batches.flatMap((b) => b.nodeIds) ?? []);
  const view = (id: string, outcome: NodeView["outcome"]): NodeView => {
    const node = byId.get(id);
    return {
      nodeId: id,
      outcome,
      instanceState: node?.instance?.state ?? null,
      online: node?.online ?? false,
      caughtUp: dispatches.get(id)?.catchUp ?? false,
    };
  };

  const batches = (state.plan?.batches ?? []).map((batch, index): BatchView => {
    const progress = state.batches[index];
    const views = batch.nodeIds.map((id) =>
      progress
        ? view(
            id,
            forwardOutcome({
              node: byId.get(id),
              dispatch: dispatches.get(id),
              targetVersionId: state.targetVersionId,
              policy: batch.policy,
              batchStartedAt: progress.startedAt,
              now,
            }),
          )
        : view(id, "not_started"),
    );
    const stopped = ["cancelled", "rolling_back", "rolled_back"].includes(state.status);
    return batchView("forward", index, progress, views, stopped);
  });

  const latePolicy = resolveBatchPolicy(state.strategy, -1);
  const alreadyCurrent = new Set(state.plan?.alreadyCurrent ?? []);
  const lateJoiners = nodes
    .filter((n) =>
      dispatches.has(n.id)
        ? dispatches.get(n.id)?.batch === null
        : n.inTarget && !planned.has(n.id) && !alreadyCurrent.has(n.id),
    )
    .map((n) =>
      view(
        n.id,
        forwardOutcome({
          node: n,
          dispatch: dispatches.get(n.id),
          targetVersionId: state.targetVersionId,
          policy: latePolicy,
          batchStartedAt: now,
          now,
        }),
      ),
    );

  let rollback: BatchView[] | null = null;
  if (state.rollback) {
    const back = new Map(state.rollback.dispatches.map((d) => [d.nodeId, d]));
    const timeoutSeconds = state.strategy.defaults.timeoutSeconds;
    rollback = state.rollback.plan.batches.map((batch, index) => {
      const progress = state.rollback?.batches[index];
      const views = batch.nodes.map(({ nodeId }) =>
        progress
          ? view(
              nodeId,
              rollbackOutcome({ node: byId.get(nodeId), dispatch: back.get(nodeId), timeoutSeconds, now }),
            )
          : view(nodeId, "not_started"),
      );
      return batchView("rollback", index, progress, views, state.status === "cancelled");
    });
  }
  return { batches, lateJoiners, rollback };
}

function batchView(
  phase: Phase,
  index: number,
  progress: BatchProgress | undefined,
  nodes: NodeView[],
  rolloutStopped: boolean,
): BatchView {
  const started = nodes.filter((n): n is NodeView & { outcome: NodeOutcome } => n.outcome !== "not_started");
  const liveTally = tallyOutcomes(started.map((n) => n.outcome));
  liveTally.nodes = nodes.length;
  liveTally.inProgress += nodes.length - started.length;
  return {
    phase,
    index,
    status: !progress ? "pending" : (progress.verdict ?? (rolloutStopped ? "stopped" : "running")),
    startedAt: progress?.startedAt ?? null,
    finishedAt: progress?.finishedAt ?? null,
    reason: progress?.reason ?? null,
    verdictTally: progress?.tally ?? null,
    liveTally,
    nodes,
  };
}
