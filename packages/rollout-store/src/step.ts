/**
 * One controller step of one rollout, in ONE transaction: lock the rollout, read its state and
 * its nodes, let the core decide, commit the dispatched nodes' desired versions and persist the
 * new state. A crash anywhere rolls the whole step back, and the next step decides again from
 * the same facts; the core never dispatches a node twice, so no node is updated twice and none
 * is forgotten.
 */
import { type Db, Prisma, setDesiredAppsForNodesInTransaction, type Tx } from "@edgefleet/db";
import {
  applyDecisions,
  type Decision,
  decideRollout,
  nextWakeUp,
  type RolloutState,
} from "@edgefleet/rollout";
import { loadRolloutFleet } from "./fleet";
import {
  decisionEvents,
  loadRolloutState,
  lockRollout,
  type RolloutRow,
  saveRolloutState,
  storedWaits,
} from "./store";

export interface StepResult {
  rolloutId: string;
  decisions: Decision[];
  /** Something happened (not only waits): step again right away, as the core expects. */
  moved: boolean;
  /** Nodes whose desired state this step committed. */
  dispatched: number;
  wakeAt: number | null;
}

export type StepOutcome = StepResult | { rolloutId: string; skipped: "not_found" | "not_owner" | "no_state" };

const STEP_TRANSACTION = { maxWait: 15_000, timeout: 300_000 } as const;

/**
 * The state each rollout's last step committed, kept by the replica that stepped it, so that its
 * next step starts from memory instead of reading and joining every node row again (at 20,000
 * nodes that read was a third of a step, and a busy rollout steps on every status change).
 * An entry is used only while the rollout's `state_version` is the one it was committed at:
 * every writer (steps, people's actions, gate verdicts, on any replica) goes through
 * saveRolloutState, which bumps it, and rollout_node rows go only with their rollout.
 * Entries are put after their transaction committed, never before: a step rolled back leaves none.
 */
export class RolloutStateCache {
  private readonly entries = new Map<string, { version: number; state: RolloutState }>();

  constructor(private readonly capacity = 32) {}

  /** The committed state of the locked row, when this replica committed it last. */
  get(row: Pick<RolloutRow, "id" | "stateVersion">): RolloutState | undefined {
    const entry = this.entries.get(row.id);
    return entry?.version === row.stateVersion ? entry.state : undefined;
  }

  put(rolloutId: string, version: number, state: RolloutState): void {
    this.entries.delete(rolloutId);
    this.entries.set(rolloutId, { version, state });
    // The least recently stepped goes first (a Map iterates in insertion order).
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.capacity) break;
      this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Runs one step. `owner`: the replica's lease id; the step is skipped (and changes nothing) when
 * another replica holds the rollout's lease, checked under the row lock (a fence: a replica that
 * lost its lease while busy cannot write after the new owner).
 */
export async function stepRollout(
  db: Db,
  rolloutId: string,
  options: { owner?: string; now?: () => number; cache?: RolloutStateCache } = {},
): Promise<StepOutcome> {
  let committed: { version: number; state: RolloutState } | null = null;
  const outcome = await db.$transaction(async (tx): Promise<StepOutcome> => {
    committed = null;
    const row = await lockRollout(tx, rolloutId);
    if (!row) return { rolloutId, skipped: "not_found" };
    if (options.owner !== undefined && !(await holdsLease(tx, row, options.owner))) {
      return { rolloutId, skipped: "not_owner" };
    }
    let state = options.cache?.get(row);
    if (!state) {
      try {
        state = await loadRolloutState(tx, row);
      } catch {
        return { rolloutId, skipped: "no_state" };
      }
    }
    const fleet = await loadRolloutFleet(tx, row, row.id);
    const now = options.now?.() ?? Date.now();
    const decisions = decideRollout(state, fleet, now);
    const after = applyDecisions(state, decisions);
    const dispatched = await commitDispatches(tx, row, decisions);
    const wakeAt = nextWakeUp(decisions);
    const moved = decisions.some((d) => d.kind !== "wait");
    if (moved || JSON.stringify(storedWaits(decisions)) !== JSON.stringify(await currentWaits(tx, row))) {
      await saveRolloutState(tx, row, state, after, {
        events: decisionEvents(decisions),
        waits: storedWaits(decisions),
        wakeAt,
      });
      committed = { version: row.stateVersion + 1, state: after };
    } else {
      await tx.$executeRaw(Prisma.sql`
        UPDATE rollout SET wake_at = ${wakeAt === null ? null : new Date(wakeAt)}::timestamptz
        WHERE id = ${row.id}::uuid`);
      committed = { version: row.stateVersion, state };
    }
    return { rolloutId, decisions, moved, dispatched, wakeAt };
  }, STEP_TRANSACTION);
  // Only now that the transaction committed (a retried or failed one left nothing behind).
  const kept = committed as { version: number; state: RolloutState } | null;
  if (kept) options.cache?.put(rolloutId, kept.version, kept.state);
  return outcome;
}

async function holdsLease(tx: Tx, row: RolloutRow, owner: string): Promise<boolean> {
  const [result] = await tx.$queryRaw<Array<{ ok: boolean }>>(Prisma.sql`
    SELECT (lease_owner = ${owner} AND lease_until > now()) AS ok FROM rollout WHERE id = ${row.id}::uuid`);
  return result?.ok ?? false;
}

async function currentWaits(tx: Tx, row: RolloutRow): Promise<unknown> {
  const [result] = await tx.$queryRaw<Array<{ waits: unknown }>>(
    Prisma.sql`SELECT waits FROM rollout WHERE id = ${row.id}::uuid`,
  );
  return result?.waits ?? null;
}

/**
 * Commits the desired version of every dispatched node, grouped by version: one set-based call
 * per version (a rollback sends nodes back to different versions; `null` removes the app).
 */
async function commitDispatches(tx: Tx, row: RolloutRow, decisions: readonly Decision[]): Promise<number> {
  const byVersion = new Map<string | null, string[]>();
  for (const d of decisions) {
    if (d.kind !== "dispatch") continue;
    for (const node of d.nodes) {
      const list = byVersion.get(node.toVersionId) ?? [];
      list.push(node.nodeId);
      byVersion.set(node.toVersionId, list);
    }
  }
  let count = 0;
  const existing = new Set(
    (
      await tx.$queryRaw<Array<{ id: string }>>(Prisma.sql`
        SELECT id::text FROM node WHERE organization_id = ${row.organizationId}::uuid
          AND id = ANY(${[...byVersion.values()].flat()}::uuid[])`)
    ).map((r) => r.id),
  );
  for (const [versionId, nodeIds] of byVersion) {
    // A node deleted since it was observed has nothing to update (the core counts it as left).
    const present = nodeIds.filter((id) => existing.has(id));
    const change = versionId === null ? { del: [row.appId] } : { put: [versionId] };
    await setDesiredAppsForNodesInTransaction(tx, row.organizationId, present, change);
    count += present.length;
  }
  return count;
}
