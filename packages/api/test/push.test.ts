/**
 * Web Push (issue 12), the console's side: a person's subscriptions and preferences over tRPC
 * (own only, bad input named, API keys refused), and the notification actions' endpoint with the
 * tokens an attacker would try: forged, tampered, replayed, expired, for a person whose role
 * was lowered or who left. A refused action changes nothing and audits nothing; an accepted one
 * acts once through the rollout domain (or Mimir's real Alertmanager for a silence) and is audited.
 */
import { signPushActionToken } from "@edgefleet/alerts";
import type { Db } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { type ApiSession, performPushAction, previewPushAction } from "../src";
import { addMember, apiKeysByRole, keyCaller, ORG, OTHER_ORG } from "./actors";
import { configureAlertmanager } from "./alertmanager-tenant";
import { callerFor, sessionOf } from "./callers";
import { labelledNodes, readyApp } from "./rollout-fixtures";
import { createTestDatabase, type TestDatabase } from "./test-database";

const SECRET = "push-action-secret-of-the-push-test-0123456789";
const MIMIR_URL = process.env.MIMIR_URL ?? null;
const P256DH = "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM";
const AUTH = "tBHItJI5svbpez7KI4CCXg";

let testDb: TestDatabase;
let db: Db;
let viewer: ApiSession;
let operator: ApiSession;
let owner: ApiSession;
let acmeId: string;
let globexId: string;
let rolloutId: string;

const deps = (now?: Date) => ({ secret: SECRET, mimirUrl: MIMIR_URL, ...(now ? { now } : {}) });
const subscription = (endpoint: string) => ({
  endpoint,
  keys: { p256dh: P256DH, auth: AUTH },
  userAgent: "test",
});

async function issuePaths(call: Promise<unknown>): Promise<string[]> {
  try {
    await call;
  } catch (error) {
    if (error instanceof TRPCError && error.cause instanceof ZodError)
      return error.cause.issues.map((issue) => issue.path.join("."));
    throw error;
  }
  throw new Error("the call was not refused");
}

function token(
  claims: Partial<Parameters<typeof signPushActionToken>[1]> = {},
  options = {},
  secret = SECRET,
) {
  return signPushActionToken(
    secret,
    {
      organizationId: acmeId,
      userId: operator.userId,
      action: "pause_rollout",
      alertFingerprint: "f00d",
      rolloutId,
      ...claims,
    },
    options,
  ).then((signed) => signed.token);
}

async function rolloutStatus(): Promise<string> {
  return (await db.rollout.findUniqueOrThrow({ where: { id: rolloutId } })).status;
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  viewer = await addMember(db, ORG, "viewer", "pia@acme.example");
  operator = await addMember(db, ORG, "operator", "pete@acme.example");
  owner = await sessionOf(db, "alice@acme.example");
  acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: ORG } })).id;
  globexId = (await db.organization.findUniqueOrThrow({ where: { slug: OTHER_ORG } })).id;
  if (MIMIR_URL) await configureAlertmanager(MIMIR_URL, acmeId);
  const app = await readyApp(db, acmeId, "push-app", ["1.0.0", "2.0.0"]);
  await labelledNodes(db, acmeId, "push-node", 4, { fleet: "push" });
  const ops = callerFor(db, operator, ORG);
  const created = await ops.rollout.create({
    appVersionId: app.versions["2.0.0"] as string,
    target: { selector: "fleet=push" },
    strategy: { batches: [{ percent: 50 }, { percent: 50 }] },
  });
  rolloutId = created.id;
  await ops.rollout.start({ id: rolloutId });
});

afterAll(async () => {
  await testDb?.drop();
});

describe("subscriptions and preferences", () => {
  it("a person subscribes a device, sees only their own, and unsubscribes only their own", async () => {
    const mine = await callerFor(db, viewer, ORG).push.subscribe(subscription("https://push.example/v/1"));
    expect(mine.pushService).toBe("push.example");
    // The same browser again: one subscription, keys updated.
    await callerFor(db, viewer, ORG).push.subscribe(subscription("https://push.example/v/1"));
    expect(await callerFor(db, viewer, ORG).push.subscriptions()).toHaveLength(1);
    expect(await callerFor(db, operator, ORG).push.subscriptions()).toEqual([]);
    await expect(callerFor(db, operator, ORG).push.unsubscribe({ id: mine.id })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    // A personal channel, not an organization channel: admins' channel list does not show it.
    expect((await callerFor(db, owner, ORG).alert.channels()).map((c) => c.kind)).not.toContain("webpush");
    await expect(callerFor(db, owner, ORG).alert.deleteChannel({ id: mine.id })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await callerFor(db, viewer, ORG).push.unsubscribe({ id: mine.id });
    expect(await callerFor(db, viewer, ORG).push.subscriptions()).toEqual([]);
    expect(await db.alertChannel.count({ where: { kind: "webpush" } })).toBe(0);
  });

  it("bad input names its field and stores nothing; API keys have no devices", async () => {
    const me = callerFor(db, viewer, ORG);
    expect(await issuePaths(me.push.subscribe(subscription("http://push.example/x")))).toEqual(["endpoint"]);
    expect(await issuePaths(me.push.subscribe(subscription("https://127.0.0.1:8443/x")))).toEqual([
      "endpoint",
    ]);
    expect(await issuePaths(me.push.subscribe(subscription("https://push.internal/x")))).toEqual([
      "endpoint",
    ]);
    const badKey = await issuePaths(
      me.push.subscribe({ ...subscription("https://push.example/y"), keys: { p256dh: "!", auth: AUTH } }),
    );
    expect([...new Set(badKey)]).toEqual(["keys.p256dh"]);
    expect(
      await issuePaths(
        me.push.updatePreferences({ pushSeverities: ["loud" as "info"], emailSeverities: [] }),
      ),
    ).toEqual(["pushSeverities.0"]);
    expect(await db.pushSubscription.count()).toBe(0);
    const keys = await apiKeysByRole(db, owner, ORG);
    await expect(
      keyCaller(db, keys.owner).push.subscribe(subscription("https://push.example/k")),
    ).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    expect(await keyCaller(db, keys.owner).push.subscriptions()).toEqual([]);
    expect(await keyCaller(db, keys.owner).push.preferences()).toBeNull();
  });

  it("preferences are per membership; e-mail to oneself is a personal channel while wanted", async () => {
    const me = callerFor(db, viewer, ORG);
    expect(await me.push.preferences()).toMatchObject({
      pushSeverities: ["critical", "warning"],
      emailSeverities: [],
      email: "pia@acme.example",
    });
    await me.push.updatePreferences({
      pushSeverities: ["critical"],
      emailSeverities: ["critical", "critical"],
    });
    expect(await me.push.preferences()).toMatchObject({
      pushSeverities: ["critical"],
      emailSeverities: ["critical"],
    });
    const personal = await db.alertChannel.findMany({ where: { userId: viewer.userId } });
    expect(personal.map((c) => [c.kind, c.target])).toEqual([["email", "pia@acme.example"]]);
    await me.push.updatePreferences({ pushSeverities: ["critical"], emailSeverities: [] });
    expect(await db.alertChannel.count({ where: { userId: viewer.userId } })).toBe(0);
    const audit = await db.auditLog.findFirst({
      where: { action: "notificationPreferences.update", actorId: viewer.userId },
    });
    expect(audit).not.toBeNull();
  });
});

describe("notification actions", () => {
  it("refuses forged, tampered and malformed tokens, and acts on nothing", async () => {
    const forged = await token({}, {}, "another-secret-that-is-long-enough-0123456789");
    await expect(performPushAction(db, deps(), forged)).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    const good = await token();
    const [header, payload, signature] = good.split(".");
    const claims = JSON.parse(Buffer.from(payload as string, "base64url").toString());
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: owner.userId })).toString("base64url")}.${signature}`;
    await expect(performPushAction(db, deps(), tampered)).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(performPushAction(db, deps(), "not-a-token")).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    // alg "none" with the same claims
    const none = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${payload}.`;
    await expect(performPushAction(db, deps(), none)).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(performPushAction(db, { ...deps(), secret: null }, good)).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    expect(await rolloutStatus()).toBe("running");
    expect(await db.pushActionUse.count()).toBe(0);
  });

  it("refuses an expired token (15 minutes at most)", async () => {
    const old = await token({}, { now: new Date(Date.now() - 16 * 60_000) });
    await expect(performPushAction(db, deps(), old)).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      message: expect.stringContaining("expired"),
    });
    // A longer lifetime cannot be asked for: it is capped at 15 minutes.
    const capped = await token({}, { ttlSeconds: 24 * 3600 });
    await expect(
      performPushAction(db, deps(new Date(Date.now() + 16 * 60_000)), capped),
    ).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    expect(await rolloutStatus()).toBe("running");
  });

  it("refuses a person whose role was lowered, or who left, since the push was sent", async () => {
    const demoted = await addMember(db, ORG, "operator", "dora@acme.example");
    const sent = await token({ userId: demoted.userId });
    await db.membership.update({
      where: { organizationId_userId: { organizationId: acmeId, userId: demoted.userId } },
      data: { role: "viewer" },
    });
    await expect(performPushAction(db, deps(), sent)).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringContaining("viewer"),
    });
    const leaver = await addMember(db, ORG, "operator", "leo@acme.example");
    const sentToLeaver = await token({ userId: leaver.userId });
    await db.membership.delete({
      where: { organizationId_userId: { organizationId: acmeId, userId: leaver.userId } },
    });
    await expect(performPushAction(db, deps(), sentToLeaver)).rejects.toMatchObject({ code: "FORBIDDEN" });
    // A token naming another organization's person: not a member there either.
    await expect(
      performPushAction(db, deps(), await token({ organizationId: globexId })),
    ).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    expect(await rolloutStatus()).toBe("running");
    expect(await db.auditLog.count({ where: { action: "rollout.pause" } })).toBe(0);
  });

  it("pauses the rollout once, audited as the person via Web Push; a replay is refused", async () => {
    const pause = await token();
    expect(await previewPushAction(db, deps(), pause)).toMatchObject({
      action: "pause_rollout",
      title: "Pause rollout",
      rolloutId,
      used: false,
    });
    const done = await performPushAction(db, deps(), pause);
    expect(done).toMatchObject({
      action: "pause_rollout",
      targetType: "rollout",
      targetId: rolloutId,
      result: "paused",
    });
    expect(await rolloutStatus()).toBe("paused");
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "rollout.pause", targetId: rolloutId },
    });
    expect(audit).toMatchObject({ actorType: "user", actorId: operator.userId, organizationId: acmeId });
    expect(audit.after).toMatchObject({ status: "paused", via: "web-push", alertFingerprint: "f00d" });
    await expect(performPushAction(db, deps(), pause)).rejects.toMatchObject({ code: "CONFLICT" });
    expect((await previewPushAction(db, deps(), pause)).used).toBe(true);
    expect(await db.auditLog.count({ where: { action: "rollout.pause" } })).toBe(1);
  });

  it("an action the rollout's state refuses leaves the token unused", async () => {
    const again = await token();
    await expect(performPushAction(db, deps(), again)).rejects.toMatchObject({ code: "CONFLICT" });
    expect((await previewPushAction(db, deps(), again)).used).toBe(false);
  });

  it.runIf(MIMIR_URL)("silences the alert for an hour in the organization's own Alertmanager", async () => {
    const labels = {
      alertname: "EdgefleetNodeOffline",
      organization: acmeId,
      node: "push-node-1",
      severity: "critical",
    };
    const silence = await token({ action: "silence_1h", alertLabels: labels, rolloutId: undefined });
    const done = await performPushAction(db, deps(), silence);
    const response = await fetch(
      new URL(`/alertmanager/api/v2/silence/${done.result}`, MIMIR_URL as string),
      {
        headers: { "X-Scope-OrgID": acmeId },
      },
    );
    expect(response.status).toBe(200);
    const stored = (await response.json()) as {
      matchers: Array<{ name: string; value: string }>;
      endsAt: string;
    };
    expect(Object.fromEntries(stored.matchers.map((m) => [m.name, m.value]))).toEqual(labels);
    const hours = (new Date(stored.endsAt).getTime() - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(0.95);
    expect(hours).toBeLessThanOrEqual(1);
    // Not visible to another tenant.
    const foreign = await fetch(new URL(`/alertmanager/api/v2/silence/${done.result}`, MIMIR_URL as string), {
      headers: { "X-Scope-OrgID": globexId },
    });
    expect(foreign.status).not.toBe(200);
    expect(await db.auditLog.count({ where: { action: "alert.silence", actorId: operator.userId } })).toBe(1);
  });
});
