/**
 * The console's side of a Web Push notification's buttons (issue 12): "pause rollout", "approve
 * next batch", "silence 1 h". The token IS the authentication (a phone's notification has no
 * session), so it is checked in this order, and any failure acts on nothing:
 *   1. signature, audience and expiry (≤ 15 min) — a forged or stale token is UNAUTHORIZED;
 *   2. the person's CURRENT membership and role in the token's organization — a person removed
 *      or lowered below operator since the push was sent is FORBIDDEN;
 *   3. single use: the token id is recorded in the same transaction as the action and its audit
 *      row — a replay is CONFLICT, and a failed action leaves the token unused.
 * The action then runs through the same domain functions as the console's own buttons.
 */
import {
  PUSH_ACTION_ROLES,
  PUSH_ACTION_TITLES,
  PUSH_SILENCE_MS,
  type PushAction,
  PushActionTokenError,
  type VerifiedPushActionToken,
  verifyPushActionToken,
} from "@edgefleet/alerts";
import { type Db, Prisma } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { inMutationTransaction } from "../mutation-transaction";
import { pushActionInput } from "../schemas/push";
import { writeAuditRow } from "./audit";
import { type Actor, roleAtLeast } from "./roles";
import { actOn } from "./rollouts";

export { pushActionInput };

export const pushActionOutput = z.object({
  action: z.string(),
  title: z.string(),
  targetType: z.string(),
  targetId: z.string(),
  /** The rollout's status after a pause/approve; the silence id after a silence. */
  result: z.string(),
});
export type PushActionOutput = z.infer<typeof pushActionOutput>;

export const pushActionPreviewOutput = z.object({
  action: z.string(),
  title: z.string(),
  organizationId: z.string(),
  rolloutId: z.string().nullable(),
  alertName: z.string().nullable(),
  expiresAt: z.date(),
  used: z.boolean(),
});

export interface PushActionDeps {
  /** EDGEFLEET_PUSH_ACTION_SECRET: null when Web Push is not configured on this console. */
  secret: string | null;
  mimirUrl: string | null;
  now?: Date;
}

async function verified(deps: PushActionDeps, token: string): Promise<VerifiedPushActionToken> {
  if (!deps.secret)
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: "Web Push actions are not configured here" });
  try {
    return await verifyPushActionToken(deps.secret, token, deps.now);
  } catch (error) {
    if (error instanceof PushActionTokenError)
      throw new TRPCError({ code: "UNAUTHORIZED", message: error.message });
    throw error;
  }
}

/** The person behind the token, with the role they hold NOW (not when the push was sent). */
async function currentActor(db: Db, claims: VerifiedPushActionToken): Promise<Actor> {
  const membership = await db.membership.findUnique({
    where: { organizationId_userId: { organizationId: claims.organizationId, userId: claims.userId } },
    select: { role: true },
  });
  if (!membership)
    throw new TRPCError({ code: "FORBIDDEN", message: "you are no longer a member of this organization" });
  const needed = PUSH_ACTION_ROLES[claims.action];
  if (!roleAtLeast(membership.role, needed))
    throw new TRPCError({
      code: "FORBIDDEN",
      message: `${PUSH_ACTION_TITLES[claims.action]} needs the ${needed} role; you are ${membership.role} now`,
    });
  return { type: "user", id: claims.userId, role: membership.role };
}

/** What the confirm page shows before the person taps (the token is not used by looking). */
export async function previewPushAction(db: Db, deps: PushActionDeps, token: string) {
  const claims = await verified(deps, token);
  const used = await db.pushActionUse.findUnique({
    where: { tokenId: claims.tokenId },
    select: { tokenId: true },
  });
  return {
    action: claims.action,
    title: PUSH_ACTION_TITLES[claims.action],
    organizationId: claims.organizationId,
    rolloutId: claims.rolloutId ?? null,
    alertName: claims.alertLabels?.alertname ?? null,
    expiresAt: claims.expiresAt,
    used: used !== null,
  };
}

/** Checks the token and the person's role, then acts once, audited (see the file comment). */
export async function performPushAction(
  db: Db,
  deps: PushActionDeps,
  token: string,
): Promise<PushActionOutput> {
  const claims = await verified(deps, token);
  const actor = await currentActor(db, claims);
  return inMutationTransaction(db, async (tx) => {
    try {
      await tx.pushActionUse.create({
        data: {
          tokenId: claims.tokenId,
          organizationId: claims.organizationId,
          userId: claims.userId,
          action: claims.action,
          expiresAt: claims.expiresAt,
        },
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002")
        throw new TRPCError({ code: "CONFLICT", message: "this action token has already been used" });
      throw error;
    }
    const outcome = await act(tx, deps, claims, actor);
    await writeAuditRow(tx, {
      organizationId: claims.organizationId,
      actor,
      action: outcome.auditAction,
      targetType: outcome.targetType,
      change: {
        targetId: outcome.targetId,
        before: outcome.before,
        after: { ...outcome.after, via: "web-push", alertFingerprint: claims.alertFingerprint },
      },
    });
    // Used ids are only needed until their token would expire anyway.
    await tx.pushActionUse.deleteMany({ where: { expiresAt: { lt: new Date(Date.now() - 3_600_000) } } });
    return {
      action: claims.action,
      title: PUSH_ACTION_TITLES[claims.action],
      targetType: outcome.targetType,
      targetId: outcome.targetId,
      result: outcome.result,
    };
  });
}

interface Outcome {
  auditAction: string;
  targetType: string;
  targetId: string;
  before: unknown;
  after: Record<string, unknown>;
  result: string;
}

const ROLLOUT_ACTION: Record<Exclude<PushAction, "silence_1h">, "pause" | "approve"> = {
  pause_rollout: "pause",
  approve_rollout: "approve",
};

async function act(
  db: Db,
  deps: PushActionDeps,
  claims: VerifiedPushActionToken,
  actor: Actor,
): Promise<Outcome> {
  if (claims.action === "silence_1h") {
    const silenceId = await createSilence(deps, claims);
    return {
      auditAction: "alert.silence",
      targetType: "alert",
      targetId: claims.alertFingerprint,
      before: null,
      after: { silenceId, matchers: claims.alertLabels ?? {}, durationMs: PUSH_SILENCE_MS },
      result: silenceId,
    };
  }
  if (!claims.rolloutId)
    throw new TRPCError({ code: "UNAUTHORIZED", message: "the action token names no rollout" });
  const type = ROLLOUT_ACTION[claims.action];
  const personAction: Parameters<typeof actOn>[4] =
    type === "pause" ? { type, note: "from a Web Push notification" } : { type };
  const { before, after } = await actOn(db, claims.organizationId, actor, claims.rolloutId, personAction);
  return {
    auditAction: `rollout.${type}`,
    targetType: "rollout",
    targetId: claims.rolloutId,
    before: { status: before },
    after: { status: after },
    result: after,
  };
}

/** An hour-long silence of exactly this alert (all its labels), in the organization's Alertmanager. */
async function createSilence(deps: PushActionDeps, claims: VerifiedPushActionToken): Promise<string> {
  if (!deps.mimirUrl)
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: "no Alertmanager configured (MIMIR_URL)" });
  const labels = claims.alertLabels ?? {};
  if (Object.keys(labels).length === 0)
    throw new TRPCError({ code: "UNAUTHORIZED", message: "the action token names no alert labels" });
  const now = deps.now ?? new Date();
  const response = await fetch(new URL("/alertmanager/api/v2/silences", deps.mimirUrl), {
    method: "POST",
    headers: { "content-type": "application/json", "X-Scope-OrgID": claims.organizationId },
    body: JSON.stringify({
      matchers: Object.entries(labels).map(([name, value]) => ({
        name,
        value,
        isRegex: false,
        isEqual: true,
      })),
      startsAt: now.toISOString(),
      endsAt: new Date(now.getTime() + PUSH_SILENCE_MS).toISOString(),
      createdBy: `edgefleet:user:${claims.userId}`,
      comment: "Silenced for 1 h from a Web Push notification",
    }),
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok)
    throw new Error(
      `Alertmanager refused the silence: ${response.status} ${(await response.text()).slice(0, 200)}`,
    );
  const { silenceID } = (await response.json()) as { silenceID?: string };
  if (!silenceID) throw new Error("Alertmanager answered without a silence id");
  return silenceID;
}
