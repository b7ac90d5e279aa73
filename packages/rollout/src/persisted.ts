/**
 * How a RolloutState is stored: a small document (status, per-batch progress, plan totals and
 * sites) plus one row per node (its plan batch, its dispatch, its rollback). The per-node lists
 * grow with the fleet, so they never go into the document: a controller step rewrites the
 * document and only the node rows that changed. Pure: the I/O is the caller's.
 */
import type { RolloutPlan } from "./plan";
import type { NodeDispatch, RollbackDispatch, RollbackPlan, RolloutState } from "./state";
import type { EpochMs } from "./time";

/** `planBatch` of a node that was already on the version when the plan was made. */
export const ALREADY_CURRENT_BATCH = -1;

/** One node of a rollout as stored (`rollout_node`). */
export interface RolloutNodeRecord {
  nodeId: string;
  /** Plan batch, ALREADY_CURRENT_BATCH, or null (not in the plan: a late joiner). */
  planBatch: number | null;
  /** Position in its plan batch (dispatch order); null outside the plan. */
  planPosition: number | null;
  /** `order`: its place among the rollout's dispatches (they only ever grow at the end). */
  dispatch: (Omit<NodeDispatch, "nodeId"> & { order: number }) | null;
  rollback: { batch: number; position: number; toVersionId: string | null } | null;
  /** Its rollback dispatch, with its place among them. */
  rollbackAt: EpochMs | null;
  rollbackOrder: number | null;
}

/** The document part: the state with every per-node list emptied. */
export type RolloutStateDocument = RolloutState & { persistedFormat: 1 };

export function splitRolloutState(state: RolloutState): {
  document: RolloutStateDocument;
  nodes: RolloutNodeRecord[];
} {
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

  return { document: rolloutStateDocument(state), nodes: [...records.values()] };
}

/** The document part of splitRolloutState alone (no node records: its size follows the batches, not the fleet). */
export function rolloutStateDocument(state: RolloutState): RolloutStateDocument {
  const plan: RolloutPlan | null = state.plan
    ? { ...state.plan, alreadyCurrent: [], batches: state.plan.batches.map((b) => ({ ...b, nodeIds: [] })) }
    : null;
  const rollback = state.rollback
    ? {
        ...state.rollback,
        plan: { batches: state.rollback.plan.batches.map((b) => ({ ...b, nodes: [] })) },
        dispatches: [],
      }
    : null;
  return { ...state, plan, dispatches: [], rollback, persistedFormat: 1 };
}

/** The inverse of splitRolloutState (node records in any order). */
export function joinRolloutState(
  document: RolloutStateDocument,
  nodes: readonly RolloutNodeRecord[],
): RolloutState {
  const { persistedFormat: _format, ...state } = document;
  const byPosition = (a: RolloutNodeRecord, b: RolloutNodeRecord) =>
    (a.planPosition ?? 0) - (b.planPosition ?? 0) || compare(a.nodeId, b.nodeId);

  let plan: RolloutPlan | null = null;
  if (state.plan) {
    const members = new Map<number, RolloutNodeRecord[]>();
    for (const node of nodes) {
      if (node.planBatch === null) continue;
      const list = members.get(node.planBatch) ?? [];
      list.push(node);
      members.set(node.planBatch, list);
    }
    const ids = (batch: number) => (members.get(batch) ?? []).sort(byPosition).map((n) => n.nodeId);
    plan = {
      ...state.plan,
      alreadyCurrent: ids(ALREADY_CURRENT_BATCH),
      batches: state.plan.batches.map((b) => ({ ...b, nodeIds: ids(b.index) })),
    };
  }

  const dispatches: NodeDispatch[] = nodes
    .filter((n): n is RolloutNodeRecord & { dispatch: NonNullable<RolloutNodeRecord["dispatch"]> } =>
      Boolean(n.dispatch),
    )
    .sort((a, b) => a.dispatch.order - b.dispatch.order)
    .map(({ nodeId, dispatch: { order: _order, ...dispatch } }) => ({ nodeId, ...dispatch }));

  let rollback = state.rollback;
  if (rollback) {
    const members = new Map<number, RolloutNodeRecord[]>();
    for (const node of nodes) {
      if (!node.rollback) continue;
      const list = members.get(node.rollback.batch) ?? [];
      list.push(node);
      members.set(node.rollback.batch, list);
    }
    const planned: RollbackPlan = {
      batches: rollback.plan.batches.map((b) => ({
        ...b,
        nodes: (members.get(b.index) ?? [])
          .sort((x, y) => (x.rollback?.position ?? 0) - (y.rollback?.position ?? 0))
          .map((n) => ({ nodeId: n.nodeId, toVersionId: n.rollback?.toVersionId ?? null })),
      })),
    };
    const back: RollbackDispatch[] = nodes
      .filter((n) => n.rollbackAt !== null)
      .sort((a, b) => (a.rollbackOrder ?? 0) - (b.rollbackOrder ?? 0))
      .map((n) => ({
        nodeId: n.nodeId,
        toVersionId: n.rollback?.toVersionId ?? null,
        dispatchedAt: n.rollbackAt ?? 0,
      }));
    rollback = { ...rollback, plan: planned, dispatches: back };
  }
  return { ...state, plan, dispatches, rollback };
}

/**
 * Node records of `after` that differ from those of `before`: what a step must write, in the
 * order splitRolloutState(after) lists them. Compared field by field: a step runs on every status
 * change, and turning two fleets' records into JSON strings per step was a tenth of the gateway's
 * CPU through a 20,000-node rollout.
 *
 * The cost follows what changed, not the fleet: a step's `after` comes from `before` through
 * applyDecisions, which keeps every list it does not touch (the plan, the rollback plan) and
 * only appends to the dispatch lists. So the per-node lists are compared entry by entry, by
 * reference (an unchanged list, by one comparison), and only the nodes of the entries that differ
 * are candidates; their records are built from per-list indexes (node id → position), kept per
 * list object (WeakMap) so that a state's lists are indexed once: the plan once per rollout, a
 * dispatch list that only grew shares its predecessor's index. A node no differing entry names has
 * the same occurrences in both states, so the same record. States are values: a list is never
 * changed in place once a state holds it (applyDecisions and applyAction copy).
 */
export function changedNodeRecords(before: RolloutState, after: RolloutState): RolloutNodeRecord[] {
  const candidates = new Set<string>();
  const beforePlan = before.plan;
  const afterPlan = after.plan;
  diffEntries(beforePlan?.alreadyCurrent ?? NONE, afterPlan?.alreadyCurrent ?? NONE, (id) =>
    candidates.add(id),
  );
  diffEntries(beforePlan?.batches ?? NONE, afterPlan?.batches ?? NONE, (batch) => {
    for (const id of batch.nodeIds) candidates.add(id);
  });
  const dispatchesFrom = diffEntries(before.dispatches, after.dispatches, (d) => candidates.add(d.nodeId));
  diffEntries(before.rollback?.plan.batches ?? NONE, after.rollback?.plan.batches ?? NONE, (batch) => {
    for (const target of batch.nodes) candidates.add(target.nodeId);
  });
  const rollbackDispatchesFrom = diffEntries(
    before.rollback?.dispatches ?? NONE,
    after.rollback?.dispatches ?? NONE,
    (d) => candidates.add(d.nodeId),
  );

  const old = new StateIndex(before);
  const now = new StateIndex(after);
  // A list that only grew (or shrank) at its end shares its predecessor's index from now on.
  shareLogIndex(before.dispatches, after.dispatches, dispatchesFrom, dispatchHasNaN);
  shareLogIndex(
    before.rollback?.dispatches ?? NONE,
    after.rollback?.dispatches ?? NONE,
    rollbackDispatchesFrom,
    rollbackDispatchHasNaN,
  );
  // A NaN is not equal to itself: the record of a node with one differs even from itself.
  for (const id of now.unequal()) candidates.add(id);

  const changed: { key: number; record: RolloutNodeRecord }[] = [];
  for (const nodeId of candidates) {
    const record = now.record(nodeId);
    if (record && !samePlainData(old.record(nodeId), record))
      changed.push({ key: now.firstSeen(nodeId), record });
  }
  return changed.sort((a, b) => a.key - b.key).map((c) => c.record);
}

const NONE: readonly never[] = [];

/**
 * Calls `differs` with both entries of every position at which two lists hold different entries
 * (by reference); returns the first such position (`length` of the longer when none).
 */
function diffEntries<T>(a: readonly T[], b: readonly T[], differs: (entry: T) => void): number {
  const length = Math.max(a.length, b.length);
  if (a === b) return length;
  let first = length;
  for (let i = 0; i < length; i++) {
    if (a[i] === b[i] && i in a === i in b) continue;
    if (first === length) first = i;
    if (i in a) differs(a[i] as T);
    if (i in b) differs(b[i] as T);
  }
  return first;
}

/** Positions of node ids in a list of per-node entries; one index serves every prefix of its list. */
class LogIndex {
  /** Entries indexed: those of the longest list sharing this index. */
  length = 0;
  private readonly first = new Map<string, number>();
  /** Every position of the ids that occur more than once, ascending. */
  private readonly repeated = new Map<string, number[]>();
  /** Positions of entries holding a NaN, ascending. */
  readonly unequal: number[] = [];

  constructor(private readonly hasNaN: (entry: { nodeId: string }) => boolean) {}

  extend(list: readonly { nodeId: string }[]): void {
    for (let i = this.length; i < list.length; i++) {
      if (!(i in list)) continue;
      const entry = list[i] as { nodeId: string };
      const nodeId = entry.nodeId;
      const first = this.first.get(nodeId);
      if (first === undefined) this.first.set(nodeId, i);
      else {
        const all = this.repeated.get(nodeId);
        if (all) all.push(i);
        else this.repeated.set(nodeId, [first, i]);
      }
      if (this.hasNaN(entry)) this.unequal.push(i);
    }
    this.length = Math.max(this.length, list.length);
  }

  /** The last position of the id among the first `length` entries; -1 when none. */
  last(nodeId: string, length: number): number {
    const all = this.repeated.get(nodeId);
    if (all) {
      for (let i = all.length - 1; i >= 0; i--) if ((all[i] as number) < length) return all[i] as number;
      return -1;
    }
    const first = this.first.get(nodeId);
    return first !== undefined && first < length ? first : -1;
  }

  firstOf(nodeId: string, length: number): number {
    const first = this.first.get(nodeId);
    return first !== undefined && first < length ? first : -1;
  }
}

type Log = readonly { nodeId: string }[];
const logIndexes = new WeakMap<Log, { index: LogIndex; length: number }>();

function logIndex(list: Log, hasNaN: (entry: { nodeId: string }) => boolean): LogIndex {
  const known = logIndexes.get(list);
  // The length check catches a list pushed to in place (not one written over in place).
  if (known && known.length === list.length) return known.index;
  const index = new LogIndex(hasNaN);
  index.extend(list);
  logIndexes.set(list, { index, length: list.length });
  return index;
}

/**
 * `after` holds `before`'s entries up to `from` (diffEntries): when that is all of the shorter
 * list, `after` is `before` grown or cut at its end, and shares its index (extended when `before`
 * was the longest list indexed by it, i.e. not when a step was retried on the same `before`).
 */
function shareLogIndex(
  before: Log,
  after: Log,
  from: number,
  hasNaN: (entry: { nodeId: string }) => boolean,
): void {
  if (before === after || from < Math.min(before.length, after.length)) return;
  const known = logIndexes.get(after);
  if (known && known.length === after.length) return;
  const index = logIndex(before, hasNaN);
  if (after.length > before.length) {
    if (index.length !== before.length) return;
    index.extend(after);
  }
  logIndexes.set(after, { index, length: after.length });
}

interface PlanEntry {
  batch: number;
  position: number;
  /** Its first place in the plan's lists (already current, then the batches in order). */
  first: number;
}

interface RollbackEntry {
  batch: number;
  position: number;
  toVersionId: string | null;
  first: number;
}

interface ListIndex<E> {
  nodes: Map<string, E>;
  /** Nodes with a NaN in one of their entries. */
  unequal: string[];
  /** Sizes when indexed (a list pushed to in place is indexed again). */
  sizes: number[];
}

const planIndexes = new WeakMap<readonly unknown[], WeakMap<readonly unknown[], ListIndex<PlanEntry>>>();
const rollbackPlanIndexes = new WeakMap<readonly unknown[], ListIndex<RollbackEntry>>();

function sizesOf(lists: readonly (readonly unknown[])[]): number[] {
  return lists.map((l) => l.length);
}

function sameSizes(index: { sizes: number[] }, sizes: number[]): boolean {
  return index.sizes.length === sizes.length && index.sizes.every((n, i) => n === sizes[i]);
}

function planIndex(plan: RolloutPlan | null): ListIndex<PlanEntry> {
  const alreadyCurrent = plan?.alreadyCurrent ?? NONE;
  const batches = plan?.batches ?? NONE;
  const sizes = [alreadyCurrent.length, ...sizesOf(batches.map((b) => b.nodeIds))];
  let byAlreadyCurrent = planIndexes.get(batches);
  const known = byAlreadyCurrent?.get(alreadyCurrent);
  if (known && sameSizes(known, sizes)) return known;
  const nodes = new Map<string, PlanEntry>();
  let seen = 0;
  const put = (nodeId: string, batch: number, position: number) => {
    const entry = nodes.get(nodeId);
    if (entry) {
      entry.batch = batch;
      entry.position = position;
    } else nodes.set(nodeId, { batch, position, first: seen });
    seen++;
  };
  alreadyCurrent.forEach((nodeId, position) => {
    put(nodeId, ALREADY_CURRENT_BATCH, position);
  });
  const unequal: string[] = [];
  for (const batch of batches) {
    batch.nodeIds.forEach((nodeId, position) => {
      put(nodeId, batch.index, position);
    });
    if (isNaNValue(batch.index)) unequal.push(...batch.nodeIds);
  }
  const index = { nodes, unequal, sizes };
  if (!byAlreadyCurrent) {
    byAlreadyCurrent = new WeakMap();
    planIndexes.set(batches, byAlreadyCurrent);
  }
  byAlreadyCurrent.set(alreadyCurrent, index);
  return index;
}

function rollbackPlanIndex(batches: readonly RollbackPlan["batches"][number][]): ListIndex<RollbackEntry> {
  const sizes = sizesOf(batches.map((b) => b.nodes));
  const known = rollbackPlanIndexes.get(batches);
  if (known && sameSizes(known, sizes)) return known;
  const nodes = new Map<string, RollbackEntry>();
  const unequal: string[] = [];
  let seen = 0;
  for (const batch of batches) {
    batch.nodes.forEach((target, position) => {
      const entry = nodes.get(target.nodeId);
      if (entry) {
        entry.batch = batch.index;
        entry.position = position;
        entry.toVersionId = target.toVersionId;
      } else
        nodes.set(target.nodeId, {
          batch: batch.index,
          position,
          toVersionId: target.toVersionId,
          first: seen,
        });
      seen++;
      if (isNaNValue(batch.index) || isNaNValue(target.toVersionId)) unequal.push(target.nodeId);
    });
  }
  const index = { nodes, unequal, sizes };
  rollbackPlanIndexes.set(batches, index);
  return index;
}

function isNaNValue(value: unknown): boolean {
  return typeof value === "number" && Number.isNaN(value);
}

/** A dispatch's fields as its record holds them (all but the node id; `order` is the record's own). */
function dispatchHasNaN(dispatch: { nodeId: string }): boolean {
  for (const key in dispatch) {
    if (key === "nodeId" || key === "order" || !Object.hasOwn(dispatch, key)) continue;
    if (isNaNValue((dispatch as unknown as Record<string, unknown>)[key])) return true;
  }
  return false;
}

function rollbackDispatchHasNaN(dispatch: { nodeId: string }): boolean {
  return isNaNValue((dispatch as RollbackDispatch).dispatchedAt);
}

/** One state's node records, one node at a time (the lists' indexes are built on first use). */
class StateIndex {
  private plan?: ListIndex<PlanEntry>;
  private dispatchIndex?: LogIndex;
  private rollbackPlan?: ListIndex<RollbackEntry>;
  private rollbackDispatchIndex?: LogIndex;

  constructor(private readonly state: RolloutState) {}

  private plans(): ListIndex<PlanEntry> {
    this.plan ??= planIndex(this.state.plan);
    return this.plan;
  }

  private dispatches(): LogIndex {
    this.dispatchIndex ??= logIndex(this.state.dispatches, dispatchHasNaN);
    return this.dispatchIndex;
  }

  private rollbacks(): ListIndex<RollbackEntry> {
    this.rollbackPlan ??= rollbackPlanIndex(this.state.rollback?.plan.batches ?? NONE);
    return this.rollbackPlan;
  }

  private rollbackDispatches(): LogIndex {
    this.rollbackDispatchIndex ??= logIndex(this.state.rollback?.dispatches ?? NONE, rollbackDispatchHasNaN);
    return this.rollbackDispatchIndex;
  }

  /** The node's record as splitRolloutState writes it; undefined when no list names it. */
  record(nodeId: string): RolloutNodeRecord | undefined {
    const planned = this.plans().nodes.get(nodeId);
    const dispatchAt = this.dispatches().last(nodeId, this.state.dispatches.length);
    const rollback = this.rollbacks().nodes.get(nodeId);
    const rollbackDispatches = this.state.rollback?.dispatches ?? NONE;
    const rollbackAt = this.rollbackDispatches().last(nodeId, rollbackDispatches.length);
    if (!planned && dispatchAt < 0 && !rollback && rollbackAt < 0) return undefined;
    const record: RolloutNodeRecord = {
      nodeId,
      planBatch: null,
      planPosition: null,
      dispatch: null,
      rollback: null,
      rollbackAt: null,
      rollbackOrder: null,
    };
    if (planned) Object.assign(record, { planBatch: planned.batch, planPosition: planned.position });
    if (dispatchAt >= 0) {
      const { nodeId: _nodeId, ...dispatch } = this.state.dispatches[dispatchAt] as NodeDispatch;
      record.dispatch = { ...dispatch, order: dispatchAt };
    }
    if (rollback) {
      record.rollback = {
        batch: rollback.batch,
        position: rollback.position,
        toVersionId: rollback.toVersionId,
      };
    }
    if (rollbackAt >= 0) {
      const dispatch = rollbackDispatches[rollbackAt] as RollbackDispatch;
      Object.assign(record, { rollbackAt: dispatch.dispatchedAt, rollbackOrder: rollbackAt });
    }
    return record;
  }

  /** Where splitRolloutState lists the node: by the first list naming it, then its place there. */
  firstSeen(nodeId: string): number {
    const slot = (list: number, position: number) => list * 2 ** 40 + position;
    const planned = this.plans().nodes.get(nodeId);
    if (planned) return slot(0, planned.first);
    const dispatched = this.dispatches().firstOf(nodeId, this.state.dispatches.length);
    if (dispatched >= 0) return slot(1, dispatched);
    const rollback = this.rollbacks().nodes.get(nodeId);
    if (rollback) return slot(2, rollback.first);
    return slot(3, this.rollbackDispatches().firstOf(nodeId, this.state.rollback?.dispatches.length ?? 0));
  }

  /** Nodes whose record holds a NaN (never equal, not even to itself). */
  *unequal(): Iterable<string> {
    yield* this.plans().unequal;
    yield* this.rollbacks().unequal;
    const dispatches = this.state.dispatches;
    for (const at of this.dispatches().unequal)
      if (at < dispatches.length) yield (dispatches[at] as NodeDispatch).nodeId;
    const rollbackDispatches = this.state.rollback?.dispatches ?? NONE;
    for (const at of this.rollbackDispatches().unequal) {
      if (at < rollbackDispatches.length) yield (rollbackDispatches[at] as RollbackDispatch).nodeId;
    }
  }
}

/** Deep equality of JSON-like data (records of scalars, nested records, arrays). */
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

/** Whether a stored document is one this module wrote (the seed's rollouts, for one, are not). */
export function isRolloutStateDocument(value: unknown): value is RolloutStateDocument {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { persistedFormat?: unknown }).persistedFormat === 1 &&
    typeof (value as { status?: unknown }).status === "string"
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
