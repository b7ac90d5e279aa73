import {
  PUSH_ACTION_ROLES,
  type PushMessage,
  pushActionsFor,
  pushMessageOf,
  signPushActionToken,
} from "@edgefleet/alerts";
import type { Db, Role } from "@edgefleet/db";
import type { RelayedAlert } from "./relay.js";

/** The outbox row of a person's Web Push device, as the delivery worker claimed it. */
export interface PushOutbox {
  organization_id: string;
  user_id: string;
  alert: RelayedAlert;
}

const ROLE_RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2, owner: 3 };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A rollout in progress of the alert's app (a crash-looping app is the rollout to stop), or
 * null. Alerts that carry their own `rollout` label are about that rollout instead.
 */
async function runningRolloutOfApp(
  db: Db,
  organizationId: string,
  alert: RelayedAlert,
): Promise<string | null> {
  const app = alert.labels.app;
  if (!app || alert.labels.rollout) return null;
  const rollout = await db.rollout.findFirst({
    where: {
      organizationId,
      status: "running",
      app: UUID.test(app) ? { OR: [{ id: app }, { name: app }] } : { name: app },
    },
    orderBy: { createdAt: "desc" },
    select: { id: true },
  });
  return rollout?.id ?? null;
}

/**
 * The notification for one device: its action tokens are signed now, at each attempt, so every
 * token is fresh for its 15 minutes and bound to this person, organization, alert and action.
 */
export async function pushMessageFor(db: Db, actionSecret: string, row: PushOutbox): Promise<PushMessage> {
  const running = await runningRolloutOfApp(db, row.organization_id, row.alert);
  // Buttons the person may press today (the console checks the role again when one is pressed).
  const membership = await db.membership.findUnique({
    where: { organizationId_userId: { organizationId: row.organization_id, userId: row.user_id } },
    select: { role: true },
  });
  const offered = pushActionsFor(row.alert, running).filter(
    ({ action }) => membership !== null && ROLE_RANK[membership.role] >= ROLE_RANK[PUSH_ACTION_ROLES[action]],
  );
  const actions = await Promise.all(
    offered.map(async ({ action, rolloutId }) => {
      const { token } = await signPushActionToken(actionSecret, {
        organizationId: row.organization_id,
        userId: row.user_id,
        action,
        alertFingerprint: row.alert.fingerprint,
        ...(rolloutId ? { rolloutId } : {}),
        ...(action === "silence_1h" ? { alertLabels: row.alert.labels } : {}),
      });
      return { action, token };
    }),
  );
  return pushMessageOf(row.alert, actions);
}
