/**
 * What people do to a rollout (start, pause, resume, approve, abort, rollback), persisted: under
 * the rollout's row lock, in the caller's transaction (the API's audited mutation), with an event
 * on the timeline and a NOTIFY that wakes the controller. The transition itself is the core's
 * `applyAction`; a refusal changes nothing.
 */
import { randomBytes } from "node:crypto";
import { type ActorType, Prisma, ROLLOUT_CHANGED_CHANNEL, type Tx } from "@edgefleet/db";
import {
  type ActionRefusal,
  applyAction,
  newRolloutState,
  type RolloutAction,
  type RolloutState,
  type RolloutStrategy,
  splitRolloutState,
} from "@edgefleet/rollout";
import { loadRolloutFleet, targetNodes } from "./fleet";
import { insertEvents, loadRolloutState, lockRollout, saveRolloutState } from "./store";

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

export interface NewRollout {
  organizationId: string;
  appId: string;
  appVersionId: string;
  selector: string;
  siteIds: readonly string[];
  /** Parsed (rolloutStrategySchema output): stored as is, so later default changes never change it. */
  strategy: RolloutStrategy;
  /** Shown on the timeline: "created for version …". */
  versionLabel: string;
  actor: { type: ActorType; id: string | null };
}

/** Inserts a pending rollout with its first event. Validation (target, conflicts) is the caller's. */
export async function insertRollout(tx: Tx, rollout: NewRollout): Promise<string> {
  const { document } = splitRolloutState(newRolloutState(rollout.appVersionId, rollout.strategy));
  const [created] = await tx.$queryRaw<Array<{ id: string }>>(Prisma.sql`
    INSERT INTO rollout (id, organization_id, app_id, app_version_id, selector, site_ids, strategy, state,
      created_by, updated_at)
    VALUES (${uuidv7()}::uuid, ${rollout.organizationId}::uuid, ${rollout.appId}::uuid, ${rollout.appVersionId}::uuid,
      ${rollout.selector}, ${[...rollout.siteIds]}::uuid[], ${JSON.stringify(rollout.strategy)}::jsonb,
      ${JSON.stringify(document)}::jsonb, ${rollout.actor.id}, now())
    RETURNING id::text`);
  if (!created) throw new Error("rollout insert returned nothing");
  await insertEvents(tx, { id: created.id, organizationId: rollout.organizationId }, [
    {
      kind: "created",
      message: `created for version ${rollout.versionLabel}`,
      actorType: rollout.actor.type,
      actorId: rollout.actor.id,
    },
  ]);
  await notifyRolloutChanged(tx, created.id);
  return created.id;
}

/** A UUIDv7 (time-ordered, like Prisma's uuid(7)): list pages go by id. */
function uuidv7(): string {
  const bytes = randomBytes(16);
  const ms = BigInt(Date.now());
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
