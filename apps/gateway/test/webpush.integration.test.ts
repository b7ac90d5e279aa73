import { type PushMessage, relayToken, verifyPushActionToken } from "@edgefleet/alerts";
import type { Db } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { type RunningNats, startPlainHub, waitFor } from "@edgefleet/nats-tenancy/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { GatewayProcess, metricValue } from "./support/gateway-process.js";
import { type Device, newDevice, PushStandIn } from "./support/push-stand-in.js";
import { requireTestEnv } from "./support/required-env.js";

// Web Push from the real relay (issue 12): Alertmanager-shaped posts to the gateway's relay are
// fanned out to people's subscribed devices by their preferences, queued in the outbox and sent
// with web-push (VAPID, aes128gcm) to an HTTPS push stand-in that decrypts them with the
// device's keys. The notification carries signed action tokens bound to the person, the
// organization, the alert and the action. A re-send is not delivered twice; a 410 removes the
// subscription; a push service answering 500 forever is retried with backoff, then given up,
// counted and logged — never a tight loop.

const MIMIR_URL = requireTestEnv("MIMIR_URL");
const RELAY_SECRET = "relay-secret-of-the-webpush-test-0123456789";
const ACTION_SECRET = "push-action-secret-of-the-webpush-test-0123456789";
const VAPID = webpush.generateVAPIDKeys();
const MAX_ATTEMPTS = 4;
const BACKOFF_BASE_MS = 300;

let hub: RunningNats;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let standIn: PushStandIn;
let organizationId: string;
let operatorId: string;
let viewerId: string;
let rolloutId: string;
const devices: Record<"operator" | "viewer" | "gone" | "down", Device> = {
  operator: newDevice("/ok/operator-phone"),
  viewer: newDevice("/ok/viewer-laptop"),
  gone: newDevice("/gone/old-tablet"),
  down: newDevice("/down/broken-service"),
};
const channelOf: Record<string, string> = {};

async function subscribe(userId: string, device: Device): Promise<void> {
  const channel = await db.alertChannel.create({
    data: { organizationId, userId, kind: "webpush", name: `web-push:${device.path}`, target: "127.0.0.1" },
  });
  channelOf[device.path] = channel.id;
  await db.pushSubscription.create({
    data: {
      organizationId,
      userId,
      channelId: channel.id,
      endpoint: standIn.register(device),
      p256dh: device.p256dh,
      auth: device.authBase64url,
    },
  });
}

function alert(fingerprint: string, severity: string, labels: Record<string, string> = {}) {
  return {
    status: "firing",
    labels: {
      alertname: "EdgefleetAppCrashLooping",
      organization: organizationId,
      policy: "p1",
      kind: "app_crash_looping",
      severity,
      node: "meter-7",
      site: "plant-1",
      app: "meter",
      ...labels,
    },
    annotations: {
      summary: "app meter restarted 5 times in 10 min on node meter-7",
      console_url: "https://console.example/nodes/x",
    },
    startsAt: "2026-11-25T09:00:00Z",
    fingerprint,
  };
}

async function relay(alerts: unknown[]) {
  const response = await fetch(`${gateway.baseUrl}/alerts/relay/${organizationId}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${relayToken(RELAY_SECRET, organizationId)}`,
      "content-type": "application/json",
    },
    body: JSON.stringify({ version: "4", alerts }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { queued: number; duplicates: number };
}

async function deliveries(result: string): Promise<number> {
  const text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
  return (
    metricValue(text, `edgefleet_gateway_alert_deliveries_total{kind="webpush",result="${result}"}`) ?? 0
  );
}

const at = (path: string) => standIn.received.filter((r) => r.path === path);

beforeAll(async () => {
  hub = await startPlainHub();
  database = await createMigratedDatabase();
  db = database.db;
  standIn = await PushStandIn.start();
  organizationId = (await db.organization.create({ data: { slug: "push", name: "Push" } })).id;
  operatorId = (await db.user.create({ data: { email: "op@push.example" } })).id;
  viewerId = (await db.user.create({ data: { email: "vi@push.example" } })).id;
  await db.membership.create({ data: { organizationId, userId: operatorId, role: "operator" } });
  // The viewer wants only critical alerts on their devices.
  await db.membership.create({
    data: { organizationId, userId: viewerId, role: "viewer", pushSeverities: ["critical"] },
  });
  const app = await db.app.create({ data: { organizationId, name: "meter" } });
  const version = await db.appVersion.create({
    data: {
      organizationId,
      appId: app.id,
      version: "2.0.0",
      artifactSource: "upload",
      runSpec: { command: ["./meter"] },
    },
  });
  rolloutId = (
    await db.rollout.create({
      data: { organizationId, appId: app.id, appVersionId: version.id, selector: "", status: "running" },
    })
  ).id;
  await subscribe(operatorId, devices.operator);
  await subscribe(viewerId, devices.viewer);
  await subscribe(operatorId, devices.gone);
  await subscribe(operatorId, devices.down);

  gateway = await GatewayProcess.start({
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    MIMIR_URL,
    // The stand-in's self-signed certificate, trusted the way an operator adds a private CA.
    NODE_EXTRA_CA_CERTS: standIn.caFile,
    GATEWAY_ALERT_RELAY_SECRET: RELAY_SECRET,
    GATEWAY_CONSOLE_URL: "https://console.example",
    GATEWAY_ALERT_DELIVERY_POLL_MS: "100",
    GATEWAY_ALERT_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
    GATEWAY_ALERT_BACKOFF_BASE_MS: String(BACKOFF_BASE_MS),
    GATEWAY_ALERT_BACKOFF_MAX_MS: "2000",
    GATEWAY_ALERT_WEBHOOK_ALLOW_PRIVATE: "true",
    EDGEFLEET_VAPID_PUBLIC_KEY: VAPID.publicKey,
    EDGEFLEET_VAPID_PRIVATE_KEY: VAPID.privateKey,
    EDGEFLEET_VAPID_SUBJECT: "mailto:ops@push.example",
    EDGEFLEET_PUSH_ACTION_SECRET: ACTION_SECRET,
  });
  await gateway.waitForReadyz(200);
}, 90_000);

afterAll(async () => {
  await gateway?.kill();
  await standIn?.stop();
  await database?.drop();
  await hub?.stop();
});

describe("Web Push from the relay to a push service", () => {
  it("delivers an encrypted, VAPID-signed notification with signed actions to each wanting device", async () => {
    const queued = await relay([alert("crit-1", "critical")]);
    expect(queued.queued).toBe(4);
    const [received] = await waitFor(
      "the operator's phone to get the push",
      () => {
        const got = at(devices.operator.path);
        return got.length > 0 ? got : undefined;
      },
      30_000,
      100,
    );
    expect(received?.vapidKey).toBe(VAPID.publicKey);
    expect(received?.vapidVerified).toBe(true);
    expect(received?.urgency).toBe("high");
    const message = JSON.parse(received?.payload ?? "null") as PushMessage;
    expect(message).toMatchObject({
      v: 1,
      title: "app meter restarted 5 times in 10 min on node meter-7",
      tag: "crit-1",
      url: "https://console.example/nodes/x",
    });
    // The crash-looping app has a rollout in progress: "pause rollout", and "silence 1 h".
    expect(message.actions.map((a) => [a.action, a.title])).toEqual([
      ["pause_rollout", "Pause rollout"],
      ["silence_1h", "Silence 1 h"],
    ]);
    const pause = await verifyPushActionToken(ACTION_SECRET, message.actions[0]?.token ?? "");
    expect(pause).toMatchObject({
      organizationId,
      userId: operatorId,
      action: "pause_rollout",
      rolloutId,
      alertFingerprint: "crit-1",
    });
    expect(pause.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(15 * 60_000);
    const silence = await verifyPushActionToken(ACTION_SECRET, message.actions[1]?.token ?? "");
    expect(silence.alertLabels).toMatchObject({
      alertname: "EdgefleetAppCrashLooping",
      organization: organizationId,
    });
    // The viewer's laptop got its own copy, without buttons a viewer may not press.
    await waitFor(
      "the viewer's laptop",
      () => (at(devices.viewer.path).length > 0 ? true : undefined),
      30_000,
      100,
    );
    const viewerMessage = JSON.parse(at(devices.viewer.path)[0]?.payload ?? "null") as PushMessage;
    expect(viewerMessage.title).toBe(message.title);
    expect(viewerMessage.actions).toEqual([]);
  });

  it("follows each person's preferences: a warning does not reach the viewer who wants only critical", async () => {
    const queued = await relay([alert("warn-1", "warning")]);
    // operator: phone, (gone device was removed by now or is still queued), down; viewer: none.
    await waitFor(
      "the warning on the operator's phone",
      () => (at(devices.operator.path).some((r) => r.payload?.includes('"tag":"warn-1"')) ? true : undefined),
      30_000,
      100,
    );
    expect(at(devices.viewer.path).some((r) => r.payload?.includes("warn-1"))).toBe(false);
    const viewerRows = await db.alertNotification.count({
      where: { channelId: channelOf[devices.viewer.path] as string },
    });
    expect(viewerRows).toBe(1);
    expect(queued.queued).toBeGreaterThanOrEqual(2);
  });

  it("does not deliver Alertmanager's re-send twice", async () => {
    const before = at(devices.operator.path).length;
    const again = await relay([alert("crit-1", "critical")]);
    expect(again.queued).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(at(devices.operator.path).length).toBe(before);
    expect(at(devices.operator.path).filter((r) => r.payload?.includes('"tag":"crit-1"'))).toHaveLength(1);
  });

  it("removes a subscription the push service answers 410 for", async () => {
    await waitFor(
      "the expired subscription removed",
      async () =>
        (await db.pushSubscription.count({ where: { endpoint: { contains: "/gone/" } } })) === 0
          ? true
          : undefined,
      30_000,
      200,
    );
    expect(at(devices.gone.path).length).toBeGreaterThanOrEqual(1);
    expect(await db.alertChannel.count({ where: { id: channelOf[devices.gone.path] as string } })).toBe(0);
    expect(await deliveries("expired")).toBeGreaterThanOrEqual(1);
  });

  it("retries a push service answering 500 with backoff, then gives up: counted, logged, never a tight loop", async () => {
    const channelId = channelOf[devices.down.path] as string;
    const given = await waitFor(
      "the 500 notification given up",
      async () => {
        // crit-1's notification: the warning of the test before went to this device too, and
        // gives up on its own schedule.
        const row = await db.alertNotification.findFirst({
          where: { channelId, state: "failed", alert: { path: ["fingerprint"], equals: "crit-1" } },
        });
        return row ?? undefined;
      },
      60_000,
      200,
    );
    expect(given.attempts).toBe(MAX_ATTEMPTS);
    expect(given.lastError).toContain("500");
    // Every attempt is in the delivery log. Most reach the push service and get its 500; one may
    // fail on the way instead (a kept-alive connection the service closed just then, on a loaded
    // machine), which is a failed attempt too. The last one is the service's 500.
    const log = await db.alertDelivery.findMany({
      where: { notificationId: given.id },
      orderBy: { attempt: "asc" },
    });
    expect(log.map((d) => [d.attempt, d.ok])).toEqual(
      Array.from({ length: MAX_ATTEMPTS }, (_, i) => [i + 1, false]),
    );
    for (const d of log)
      expect(d.statusCode === 500 || (d.statusCode === null && d.error !== null)).toBe(true);
    expect(log.at(-1)?.statusCode).toBe(500);
    const tries = at(devices.down.path).filter((r) => r.payload?.includes('"tag":"crit-1"'));
    expect(tries.length).toBeGreaterThanOrEqual(log.filter((d) => d.statusCode === 500).length);
    expect(tries.length).toBeLessThanOrEqual(MAX_ATTEMPTS);
    // Backoff: base × 2^(n-1) with jitter down to half; the gaps grow and none is a tight loop.
    const times = log.map((d) => d.at.getTime() - d.durationMs);
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(BACKOFF_BASE_MS / 2 - 50);
    expect(await deliveries("failed")).toBeGreaterThanOrEqual(1);
    expect(gateway.output.join("")).toContain("alert notification given up");
  });
});
