/**
 * Where a node stands in a rollout's per-node lists, without scanning them: node id → position,
 * kept per list object (WeakMap), so that a state's lists are indexed once and not on every step.
 *
 * Why: the controller steps a rollout on every status change, and each step used to rebuild a map
 * of every dispatch (twice: in decideRollout, and as a Set in applyDecisions for each dispatch
 * decision) and of every planned node; at 100,000 nodes that was most of a step. States are
 * values (applyDecisions and applyAction copy what they change, never change a list in place), so
 * an index built for a list stays right for it; the length check catches a list pushed to in
 * place anyway. A dispatch list only ever grows at its end (applyDecisions appends), and the list
 * it grew from shares its index: the entries past a list's length are not in it. That needs every
 * node id once per index, which the reducer ensures; a list naming a node twice (a hand-made
 * state) gets an index of its own, where the last entry of a node wins, as a Map built over it did.
 */
import type { RolloutPlan } from "./plan";

type Entry = { readonly nodeId: string };

class ListIndex {
  /** Node id → its (last) position among the entries indexed. */
  readonly positions = new Map<string, number>();
  /** Entries indexed: those of the longest list sharing this index. */
  length = 0;
  /** No node id occurs twice among the entries indexed: the index may serve longer lists. */
  unique = true;

  extend(list: readonly Entry[]): void {
    for (let i = this.length; i < list.length; i++) {
      const entry = list[i];
      // A hole names no node (states come from JSON and the reducer: they have none).
      if (entry === undefined) continue;
      if (this.positions.has(entry.nodeId)) this.unique = false;
      this.positions.set(entry.nodeId, i);
    }
    this.length = Math.max(this.length, list.length);
  }
}

const indexes = new WeakMap<readonly Entry[], { index: ListIndex; length: number }>();

function indexOf(list: readonly Entry[]): ListIndex {
  const known = indexes.get(list);
  if (known && known.length === list.length) return known.index;
  const index = new ListIndex();
  index.extend(list);
  indexes.set(list, { index, length: list.length });
  return index;
}

/** Position of the node's entry in the list (its last one, should it name the node twice); -1: none. */
export function positionIn(list: readonly Entry[], nodeId: string): number {
  const position = indexOf(list).positions.get(nodeId);
  // An index shared with a longer list also holds that list's later entries.
  return position !== undefined && position < list.length ? position : -1;
}

/** The node's entry in the list (its last one); undefined: the list does not name it. */
export function entryOf<E extends Entry>(list: readonly E[], nodeId: string): E | undefined {
  const position = positionIn(list, nodeId);
  return position < 0 ? undefined : list[position];
}

/** `entryOf` for many lookups in one list: the list's index is looked up once. */
export function dispatchLookup<E extends Entry>(list: readonly E[]): (nodeId: string) => E | undefined {
  const positions = indexOf(list).positions;
  const length = list.length;
  return (nodeId) => {
    const position = positions.get(nodeId);
    return position !== undefined && position < length ? list[position] : undefined;
  };
}

/**
 * `list` with `added` appended, a new list (states are values) that shares `list`'s index, so the
 * next step finds the grown list indexed. Not shared (the new list is indexed when first asked)
 * when `list` is not the longest list of its index (a step retried on the same state) or an id
 * would occur twice.
 */
export function appended<E extends Entry>(list: readonly E[], added: readonly E[]): E[] {
  const grown = [...list, ...added];
  const known = indexes.get(list);
  if (!known || known.length !== list.length) return grown;
  const index = known.index;
  if (!index.unique || index.length !== list.length) return grown;
  const ids = new Set<string>();
  for (const { nodeId } of added) {
    if (index.positions.has(nodeId) || ids.has(nodeId)) return grown;
    ids.add(nodeId);
  }
  index.extend(grown);
  indexes.set(grown, { index, length: grown.length });
  return grown;
}

/** Node id → the index of its planned batch (the last batch naming it), once per plan's batch list. */
const plannedBatches = new WeakMap<
  RolloutPlan["batches"],
  { sizes: number[]; batchOf: Map<string, number> }
>();

export function plannedBatchIndex(plan: RolloutPlan | null): ReadonlyMap<string, number> {
  const batches = plan?.batches;
  if (!batches) return EMPTY;
  const sizes = batches.map((b) => b.nodeIds.length);
  const known = plannedBatches.get(batches);
  if (known && known.sizes.length === sizes.length && known.sizes.every((n, i) => n === sizes[i]))
    return known.batchOf;
  const batchOf = new Map<string, number>();
  for (const batch of batches) for (const id of batch.nodeIds) batchOf.set(id, batch.index);
  plannedBatches.set(batches, { sizes, batchOf });
  return batchOf;
}

const EMPTY: ReadonlyMap<string, number> = new Map();
