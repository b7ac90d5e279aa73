/**
 * What people do to a rollout (start, pause, resume, approve, abort, rollback), persisted: under
 * the rollout's row lock, in the caller's transaction (the API's audited mutation), with an event
 * on the timeline and a NOTIFY that wakes the controller. The transition itself is the core's
 * `applyAction`; a refusal changes nothing.
 */
import { type ActorType, Prisma, ROLLOUT_CHANGED_CHANNEL, type Tx } from "@edgefleet/db";
import { type ActionRefusal, applyAction, type RolloutAction, type RolloutState } from "@edgefleet/rollout";
import { loadRolloutFleet, targetNodes } from "./fleet";
import { loadRolloutState, lockRollout, saveRolloutState } from "./store";

/** An action as a person gives it (`start` takes the target's nodes itself). */
export type PersonAction =
  | { type: "start" }
  | { type: "pause"; note?: string }
  | { type: "resume" }
  | { type: "approve" }
  | { type: "abort"; note?: string }
  | { type: "rollback"; note?: string };

export type ActOutcome =
  | { ok: true; before: RolloutState; after: RolloutState }
  | { ok: false; reason: "not_found" }
  | { ok: false; reason: "refused"; refusal: ActionRefusal };

export async function actOnRollout(
  tx: Tx,
  organizationId: string,
  rolloutId: string,
  action: PersonAction,
  actor: { type: ActorType; id: string | null },
  now: number = Date.now(),
): Promise<ActOutcome> {
  const row = await lockRollout(tx, rolloutId, organizationId);
  if (!row) return { ok: false, reason: "not_found" };
  const before = await loadRolloutState(tx, row);
  const coreAction: RolloutAction =
    action.type === "start"
      ? { type: "start", nodes: targetNodes(await loadRolloutFleet(tx, row, row.id)) }
      : action;
  const result = applyAction(before, coreAction, now);
  if (!result.ok) return { ok: false, reason: "refused", refusal: result.error };
  const note = "note" in action && action.note?.trim() ? `: ${action.note.trim()}` : "";
  await saveRolloutState(tx, row, before, result.state, {
    events: [
      {
        kind: action.type,
        message: `${action.type}${note}`,
        actorType: actor.type,
        actorId: actor.id,
        data: { from: before.status, to: result.state.status },
      },
    ],
    wakeAt: now,
  });
  await notifyRolloutChanged(tx, rolloutId);
  return { ok: true, before, after: result.state };
}

/** Wakes the controllers (delivered when the transaction commits). */
export async function notifyRolloutChanged(tx: Pick<Tx, "$executeRaw">, rolloutId: string): Promise<void> {
  await tx.$executeRaw(Prisma.sql`SELECT pg_notify(${ROLLOUT_CHANGED_CHANNEL}, ${rolloutId})`);
}
