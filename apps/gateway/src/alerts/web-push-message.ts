import {
  type PushMessage,
  pushActionsFor,
  pushMessageOf,
  signPushActionToken,
} from "@edgefleet/alerts";
import type { Db } from "@edgefleet/db";
import type { RelayedAlert } from "./relay.js";

/** The outbox row of a person's Web Push device, as the delivery worker claimed it. */
export interface PushOutbox {
  organization_id: string;
  user_id: string;
  alert: RelayedAlert;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A rollout in progress of the alert's app (a crash-looping app is the rollout to stop), or
 * null. Alerts that carry their own `rollout` label are about that rollout instead.
 */
async function runningRolloutOfApp(db: Db, organizationId: string, alert: RelayedAlert): Promise<string | null> {
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
  const actions = await Promise.all(
    pushActionsFor(row.alert, running).map(async ({ action, rolloutId }) => {
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
