/**
 * The node-record diff as it was before it followed the change instead of the fleet: both whole
 * states split into node records and compared record by record. Kept verbatim (with the split it
 * used) as the reference the property test holds `changedNodeRecords` to, and as the "before" of
 * bench/step-diff.bench.ts.
 */
import type { RolloutNodeRecord, RolloutState } from "../src";

const ALREADY_CURRENT_BATCH = -1;

export function referenceSplitNodes(state: RolloutState): RolloutNodeRecord[] {
  const records = new Map<string, RolloutNodeRecord>();
  const record = (nodeId: string): RolloutNodeRecord => {
    let found = records.get(nodeId);
    if (!found) {
      found = {
        nodeId,
        planBatch: null,
        planPosition: null,
        dispatch: null,
        rollback: null,
        rollbackAt: null,
        rollbackOrder: null,
      };
      records.set(nodeId, found);
    }
    return found;
  };
  state.plan?.alreadyCurrent.forEach((nodeId, position) => {
    Object.assign(record(nodeId), { planBatch: ALREADY_CURRENT_BATCH, planPosition: position });
  });
  for (const batch of state.plan?.batches ?? []) {
    batch.nodeIds.forEach((nodeId, position) => {
      Object.assign(record(nodeId), { planBatch: batch.index, planPosition: position });
    });
  }
  state.dispatches.forEach(({ nodeId, ...dispatch }, order) => {
    record(nodeId).dispatch = { ...dispatch, order };
  });
  for (const batch of state.rollback?.plan.batches ?? []) {
    batch.nodes.forEach((target, position) => {
      record(target.nodeId).rollback = { batch: batch.index, position, toVersionId: target.toVersionId };
    });
  }
  state.rollback?.dispatches.forEach((dispatch, order) => {
    Object.assign(record(dispatch.nodeId), { rollbackAt: dispatch.dispatchedAt, rollbackOrder: order });
  });
  return [...records.values()];
}

export function referenceChangedNodeRecords(before: RolloutState, after: RolloutState): RolloutNodeRecord[] {
  const old = new Map(referenceSplitNodes(before).map((n) => [n.nodeId, n]));
  return referenceSplitNodes(after).filter((n) => !samePlainData(old.get(n.nodeId), n));
}

function samePlainData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  if (keysA.length !== Object.keys(b).length) return false;
  for (const key of keysA) {
    if (!Object.hasOwn(b, key)) return false;
    if (!samePlainData((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
      return false;
  }
  return true;
}
