/**
 * The rollback plan: every node the rollout dispatched goes back to the version it ran before
 * (or loses the app if it ran none), batch by batch in the order the rollout took them, late
 * joiners last. Nodes the rollout never dispatched are not touched.
 */
import type { RollbackPlan, RolloutState } from "./state";

export function planRollback(state: Pick<RolloutState, "dispatches">): RollbackPlan {
  const groups = new Map<number | null, RollbackPlan["batches"][number]["nodes"]>();
  for (const dispatch of state.dispatches) {
    const list = groups.get(dispatch.batch) ?? [];
    list.push({ nodeId: dispatch.nodeId, toVersionId: dispatch.fromVersionId });
    groups.set(dispatch.batch, list);
  }
  const order = [...groups.keys()].sort((a, b) => (a === null ? 1 : b === null ? -1 : a - b));
  return {
    batches: order.map((forwardBatch, index) => ({
      index,
      forwardBatch,
      nodes: groups.get(forwardBatch) ?? [],
    })),
  };
}
