import { randomUUID } from "node:crypto";
import { errors, jwtVerify, SignJWT } from "jose";

/**
 * Actions a Web Push notification offers (issue 12). Each button carries its own signed,
 * single-use token bound to the organization, the person, the alert and the action; the
 * console's action endpoint checks it, then the person's CURRENT role, then acts.
 */
export const PUSH_ACTIONS = ["pause_rollout", "approve_rollout", "silence_1h"] as const;
export type PushAction = (typeof PUSH_ACTIONS)[number];

export const PUSH_ACTION_TITLES: Record<PushAction, string> = {
  pause_rollout: "Pause rollout",
  approve_rollout: "Approve next batch",
  silence_1h: "Silence 1 h",
};

/** The least role each action needs (the console's own button for it needs the same). */
export const PUSH_ACTION_ROLES: Record<PushAction, "operator"> = {
  pause_rollout: "operator",
  approve_rollout: "operator",
  silence_1h: "operator",
};

/** A token older than this is refused: a notification read the next morning cannot act. */
export const PUSH_ACTION_TOKEN_TTL_S = 15 * 60;
/** How long the "silence 1 h" action silences. */
export const PUSH_SILENCE_MS = 3_600_000;

const AUDIENCE = "edgefleet:push-action";
const ISSUER = "edgefleet-alert-relay";

export interface PushActionClaims {
  organizationId: string;
  userId: string;
  action: PushAction;
  /** Alertmanager's fingerprint of the alert the notification is about. */
  alertFingerprint: string;
  /** pause/approve: the rollout acted on. */
  rolloutId?: string;
  /** silence: the alert's labels, which become the silence's exact matchers. */
  alertLabels?: Record<string, string>;
}

export interface VerifiedPushActionToken extends PushActionClaims {
  tokenId: string;
  expiresAt: Date;
}

export type PushActionTokenProblem = "malformed" | "signature" | "expired";

export class PushActionTokenError extends Error {
  constructor(
    readonly problem: PushActionTokenProblem,
    message: string,
  ) {
    super(message);
    this.name = "PushActionTokenError";
  }
}

function keyOf(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

/** Signs one action token (JWT, HS256) valid `ttlSeconds` (at most 15 min) from `now`. */
export async function signPushActionToken(
  secret: string,
  claims: PushActionClaims,
  options: { now?: Date; ttlSeconds?: number } = {},
): Promise<{ token: string; tokenId: string; expiresAt: Date }> {
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const ttl = Math.min(options.ttlSeconds ?? PUSH_ACTION_TOKEN_TTL_S, PUSH_ACTION_TOKEN_TTL_S);
  const tokenId = randomUUID();
  const token = await new SignJWT({
    org: claims.organizationId,
    act: claims.action,
    fp: claims.alertFingerprint,
    ...(claims.rolloutId ? { rollout: claims.rolloutId } : {}),
    ...(claims.alertLabels ? { labels: claims.alertLabels } : {}),
  })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.userId)
    .setAudience(AUDIENCE)
    .setIssuer(ISSUER)
    .setJti(tokenId)
    .setIssuedAt(now)
    .setExpirationTime(now + ttl)
    .sign(keyOf(secret));
  return { token, tokenId, expiresAt: new Date((now + ttl) * 1000) };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checks signature, audience and expiry; throws PushActionTokenError saying which failed. */
export async function verifyPushActionToken(
  secret: string,
  token: string,
  now = new Date(),
): Promise<VerifiedPushActionToken> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, keyOf(secret), {
      algorithms: ["HS256"],
      audience: AUDIENCE,
      issuer: ISSUER,
      currentDate: now,
      requiredClaims: ["jti", "sub", "exp", "iat"],
    }));
  } catch (error) {
    if (error instanceof errors.JWTExpired)
      throw new PushActionTokenError("expired", "the action token has expired");
    if (error instanceof errors.JWSSignatureVerificationFailed)
      throw new PushActionTokenError("signature", "the action token's signature does not verify");
    throw new PushActionTokenError("malformed", "not an Edgefleet action token");
  }
  const { org, act, fp, rollout, labels, sub, jti, exp, iat } = payload;
  const labelsOk =
    labels === undefined ||
    (typeof labels === "object" &&
      labels !== null &&
      Object.values(labels).every((value) => typeof value === "string"));
  if (
    typeof org !== "string" ||
    !UUID.test(org) ||
    typeof sub !== "string" ||
    !UUID.test(sub) ||
    typeof jti !== "string" ||
    typeof fp !== "string" ||
    !(PUSH_ACTIONS as readonly unknown[]).includes(act) ||
    (rollout !== undefined && (typeof rollout !== "string" || !UUID.test(rollout))) ||
    !labelsOk ||
    typeof exp !== "number" ||
    typeof iat !== "number" ||
    exp - iat > PUSH_ACTION_TOKEN_TTL_S
  ) {
    throw new PushActionTokenError("malformed", "the action token's claims are not ones Edgefleet issues");
  }
  return {
    organizationId: org,
    userId: sub,
    action: act as PushAction,
    alertFingerprint: fp,
    ...(typeof rollout === "string" ? { rolloutId: rollout } : {}),
    ...(labels ? { alertLabels: labels as Record<string, string> } : {}),
    tokenId: jti,
    expiresAt: new Date(exp * 1000),
  };
}

/** What Alertmanager sends per alert (the relay's outbox row), as far as a push needs it. */
export interface PushAlert {
  status: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  fingerprint: string;
}

/**
 * Which actions a notification about `alert` offers. Only firing alerts act. A paused rollout
 * can be approved on; an alert about a running rollout (its own label, or the app of a rollout
 * in progress, found by the caller as `runningRolloutId`) can pause it. Every firing alert can be
 * silenced. At most two (Chrome shows two buttons); the confirm page shows the same list.
 */
export function pushActionsFor(
  alert: PushAlert,
  runningRolloutId: string | null,
): Array<{ action: PushAction; rolloutId?: string }> {
  if (alert.status !== "firing") return [];
  const actions: Array<{ action: PushAction; rolloutId?: string }> = [];
  const ownRollout = alert.labels.rollout;
  if (ownRollout && alert.labels.kind === "rollout_paused") {
    actions.push({ action: "approve_rollout", rolloutId: ownRollout });
  } else if (runningRolloutId) {
    actions.push({ action: "pause_rollout", rolloutId: runningRolloutId });
  }
  actions.push({ action: "silence_1h" });
  return actions;
}

/** The JSON the service worker receives (public/sw.js reads exactly this; keep them in step). */
export interface PushMessage {
  v: 1;
  title: string;
  body: string;
  /** Replaces an earlier notification about the same alert (firing → resolved). */
  tag: string;
  severity: string;
  status: string;
  /** Where a tap without an action goes (the alert's page in the console). */
  url: string | null;
  actions: Array<{ action: PushAction; title: string; token: string }>;
}

/** Payload of one notification; Web Push caps it near 4 KB, so labels travel only in silence tokens. */
export function pushMessageOf(
  alert: PushAlert,
  actions: Array<{ action: PushAction; token: string }>,
): PushMessage {
  const state = alert.status === "firing" ? "" : "Resolved: ";
  const summary = alert.annotations.summary ?? alert.labels.alertname ?? "Alert";
  const where = [
    alert.labels.site,
    alert.labels.node,
    alert.labels.rollout ? `rollout ${alert.labels.rollout}` : null,
  ]
    .filter(Boolean)
    .join(" · ");
  return {
    v: 1,
    title: `${state}${summary}`.slice(0, 120),
    body: [alert.labels.severity ?? "", alert.annotations.policy_name ?? "", where]
      .filter(Boolean)
      .join(" — ")
      .slice(0, 240),
    tag: alert.fingerprint,
    severity: alert.labels.severity ?? "warning",
    status: alert.status,
    url: alert.annotations.console_url ?? null,
    actions: actions.map(({ action, token }) => ({ action, title: PUSH_ACTION_TITLES[action], token })),
  };
}
