import { describe, expect, it } from "vitest";
import {
  PUSH_ACTION_TOKEN_TTL_S,
  PushActionTokenError,
  pushActionsFor,
  pushMessageOf,
  signPushActionToken,
  verifyPushActionToken,
} from "../src/push-actions";

const SECRET = "a-secret-of-the-push-actions-unit-test-0123456789";
const ORG = "0190a3c4-0000-7000-8000-000000000001";
const USER = "0190a3c4-0000-7000-8000-000000000002";
const ROLLOUT = "0190a3c4-0000-7000-8000-000000000003";

const alert = (labels: Record<string, string>, status = "firing") => ({
  status,
  labels: { alertname: "A", severity: "critical", ...labels },
  annotations: { summary: "something is wrong", console_url: "https://console.example/x", policy_name: "p" },
  fingerprint: "f1",
});

describe("which actions a notification offers", () => {
  it("approve for a paused rollout, pause for a running one of the alert's app, silence always, none when resolved", () => {
    expect(pushActionsFor(alert({ kind: "rollout_paused", rollout: ROLLOUT }), null)).toEqual([
      { action: "approve_rollout", rolloutId: ROLLOUT },
      { action: "silence_1h" },
    ]);
    expect(pushActionsFor(alert({ kind: "app_crash_looping", app: "meter" }), ROLLOUT)).toEqual([
      { action: "pause_rollout", rolloutId: ROLLOUT },
      { action: "silence_1h" },
    ]);
    expect(pushActionsFor(alert({ kind: "node_offline" }), null)).toEqual([{ action: "silence_1h" }]);
    expect(pushActionsFor(alert({ kind: "node_offline" }, "resolved"), ROLLOUT)).toEqual([]);
  });

  it("the message names the alert, links to it and carries the tokens", () => {
    const message = pushMessageOf(alert({ site: "plant-1", node: "n1" }), [
      { action: "silence_1h", token: "t" },
    ]);
    expect(message).toEqual({
      v: 1,
      title: "something is wrong",
      body: "critical — p — plant-1 · n1",
      tag: "f1",
      severity: "critical",
      status: "firing",
      url: "https://console.example/x",
      actions: [{ action: "silence_1h", title: "Silence 1 h", token: "t" }],
    });
    expect(pushMessageOf(alert({}, "resolved"), []).title).toBe("Resolved: something is wrong");
  });
});

describe("action tokens", () => {
  const claims = {
    organizationId: ORG,
    userId: USER,
    action: "pause_rollout" as const,
    alertFingerprint: "f1",
    rolloutId: ROLLOUT,
  };

  it("verify with the secret, bound to organization, person, alert and action", async () => {
    const { token, tokenId, expiresAt } = await signPushActionToken(SECRET, claims);
    expect(await verifyPushActionToken(SECRET, token)).toEqual({ ...claims, tokenId, expiresAt });
    expect(expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(PUSH_ACTION_TOKEN_TTL_S * 1000);
  });

  it("each token has its own id (single use is per token)", async () => {
    const [a, b] = await Promise.all([
      signPushActionToken(SECRET, claims),
      signPushActionToken(SECRET, claims),
    ]);
    expect(a.tokenId).not.toBe(b.tokenId);
  });

  it("refuses another secret, an expired token and garbage, saying which", async () => {
    const { token } = await signPushActionToken(SECRET, claims);
    await expect(verifyPushActionToken(`${SECRET}x`, token)).rejects.toMatchObject({ problem: "signature" });
    const old = await signPushActionToken(SECRET, claims, { now: new Date(Date.now() - 16 * 60_000) });
    await expect(verifyPushActionToken(SECRET, old.token)).rejects.toMatchObject({ problem: "expired" });
    await expect(verifyPushActionToken(SECRET, "a.b.c")).rejects.toBeInstanceOf(PushActionTokenError);
    // A lifetime longer than 15 minutes cannot be asked for.
    const long = await signPushActionToken(SECRET, claims, { ttlSeconds: 86_400 });
    expect(long.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(PUSH_ACTION_TOKEN_TTL_S * 1000);
  });
});
