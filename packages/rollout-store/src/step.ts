/**
 * One controller step of one rollout, in ONE transaction: lock the rollout, read its state and
 * its nodes, let the core decide, commit the dispatched nodes' desired versions and persist the
 * new state. A crash anywhere rolls the whole step back, and the next step decides again from
 * the same facts; the core never dispatches a node twice, so no node is updated twice and none
 * is forgotten.
 */
import { type Db, Prisma, setDesiredAppsForNodesInTransaction, type Tx } from "@edgefleet/db";
import { applyDecisions, type Decision, decideRollout, nextWakeUp } from "@edgefleet/rollout";
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
 * Runs one step. `owner`: the replica's lease id; the step is skipped (and changes nothing) when
 * another replica holds the rollout's lease, checked under the row lock (a fence: a replica that
 * lost its lease while busy cannot write after the new owner).
 */
export async function stepRollout(
  db: Db,
  rolloutId: string,
  options: { owner?: string; now?: () => number } = {},
): Promise<StepOutcome> {
  return db.$transaction(async (tx) => {
    const row = await lockRollout(tx, rolloutId);
    if (!row) return { rolloutId, skipped: "not_found" };
    if (options.owner !== undefined && !(await holdsLease(tx, row, options.owner))) {
      return { rolloutId, skipped: "not_owner" };
    }
    let state: Awaited<ReturnType<typeof loadRolloutState>>;
    try {
      state = await loadRolloutState(tx, row);
    } catch {
      return { rolloutId, skipped: "no_state" };
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
    } else {
      await tx.$executeRaw(Prisma.sql`
        UPDATE rollout SET wake_at = ${wakeAt === null ? null : new Date(wakeAt)}::timestamptz
        WHERE id = ${row.id}::uuid`);
    }
    return { rolloutId, decisions, moved, dispatched, wakeAt };
  }, STEP_TRANSACTION);
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
