import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type PushMessage, RULE_NAMESPACE, relayToken, ruleGroupName } from "@edgefleet/alerts";
import type { Db } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { freePort, type RunningNats, startPlainHub, waitFor } from "@edgefleet/nats-tenancy/testing";
import { type ParsedMail, simpleParser } from "mailparser";
import { pushTimeseries } from "prometheus-remote-write";
import { SMTPServer } from "smtp-server";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { GatewayProcess, metricValue } from "./support/gateway-process.js";
import { newDevice, PushStandIn } from "./support/push-stand-in.js";
import { requireTestEnv } from "./support/required-env.js";

// Alerts end to end through the real Mimir ruler and Alertmanager (issue 12): a policy is
// compiled into the organization's rule group by the gateway; a node's CPU crosses the threshold;
// the ruler fires; Alertmanager notifies the gateway's relay (authenticated); the relay's outbox
// delivers a signed webhook (checked here with the Standard Webhooks library, against the
// current AND the previous secret during a rotation), an e-mail to a real SMTP server in this
// process, and a Web Push to an operator's phone (an HTTPS push stand-in that checks VAPID and
// decrypts with the device's keys). Then: Alertmanager's re-send is a no-op, a forged token or a foreign organization is
// refused, the resolution arrives, drift is repaired, a rule Mimir refuses is a visible failure,
// and a receiver that keeps failing gets its channel switched off with the reason.

const MIMIR_URL = requireTestEnv("MIMIR_URL");
const RELAY_SECRET = "relay-secret-of-the-alerts-test-0123456789";
const SECRET = `whsec_${Buffer.from("current-secret-of-the-alerts-test").toString("base64")}`;
const PREVIOUS = `whsec_${Buffer.from("previous-secret-of-the-alerts-test").toString("base64")}`;
const ACTION_SECRET = "push-action-secret-of-the-alerts-test-0123456789";
const VAPID = webpush.generateVAPIDKeys();
const phone = newDevice("/ok/oncall-phone");

interface Received {
  body: string;
  headers: IncomingHttpHeaders;
}

let hub: RunningNats;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let organizationId: string;
let siteId: string;
let nodeId: string;
let stableNodeId: string;
let policyId: string;
let hookChannelId: string;
let brokenChannelId: string;
let receiver: Server;
let brokenReceiver: Server;
let smtp: SMTPServer;
let pushService: PushStandIn;
const hooks: Received[] = [];
const mails: ParsedMail[] = [];
let cpu = 0.2;
let writing = true;
let writer: Promise<void>;

function listen(server: Server): Promise<number> {
  server.listen(0, "127.0.0.1");
  return once(server, "listening").then(() => (server.address() as AddressInfo).port);
}

/** The node's CPU as an agent would report it through the gateway: one sample a second. */
async function writeCpu(): Promise<void> {
  while (writing) {
    await pushTimeseries(
      [
        {
          labels: { __name__: "edgefleet_node_cpu_usage_ratio", org: organizationId, node: nodeId },
          samples: [{ value: cpu, timestamp: Date.now() }],
        },
      ],
      {
        url: `${MIMIR_URL}/api/v1/push`,
        headers: { "Content-Encoding": "snappy", "X-Scope-OrgID": organizationId },
        fetch: (url, init) =>
          fetch(url, { method: "POST", headers: init?.headers, body: init?.body as unknown as Uint8Array }),
      },
    ).then((result) => {
      if (result.status >= 300)
        throw new Error(`Mimir refused the sample: ${result.status} ${result.errorMessage}`);
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

async function mimir(path: string, init: RequestInit = {}) {
  const response = await fetch(new URL(path, MIMIR_URL), {
    ...init,
    headers: { "X-Scope-OrgID": organizationId, ...(init.headers ?? {}) },
  });
  return { status: response.status, text: await response.text() };
}

beforeAll(async () => {
  hub = await startPlainHub();
  database = await createMigratedDatabase();
  db = database.db;
  organizationId = (await db.organization.create({ data: { slug: "alerts", name: "Alerts" } })).id;
  siteId = (await db.site.create({ data: { organizationId, name: "plant-1" } })).id;
  nodeId = (
    await db.node.create({
      data: {
        organizationId,
        name: "press-1",
        siteId,
        labels: { tier: "canary" },
        status: "online",
        lastSeenAt: new Date(),
      },
    })
  ).id;
  // Out of the CPU policy's scope (another tier): never alerts for CPU; the node-offline test uses it.
  const stable = await db.node.create({
    data: {
      organizationId,
      name: "press-2",
      siteId,
      labels: { tier: "stable" },
      status: "online",
      lastSeenAt: new Date(),
    },
  });
  stableNodeId = stable.id;
  policyId = (
    await db.alertPolicy.create({
      data: {
        organizationId,
        name: "hot canaries",
        kind: "cpu_above",
        spec: { kind: "cpu_above", thresholdPercent: 80, forMinutes: 0 },
        selector: "tier=canary",
        siteId,
        severity: "critical",
      },
    })
  ).id;

  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      hooks.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers });
      res.writeHead(204).end();
    });
  });
  brokenReceiver = createServer((_req, res) => res.writeHead(500).end("down"));
  const [hookPort, brokenPort] = [await listen(receiver), await listen(brokenReceiver)];
  hookChannelId = (
    await db.alertChannel.create({
      data: {
        organizationId,
        name: "ops hook",
        kind: "webhook",
        target: `http://127.0.0.1:${hookPort}/hook`,
        secret: SECRET,
        previousSecret: PREVIOUS,
        previousSecretUntil: new Date(Date.now() + 3_600_000),
      },
    })
  ).id;
  brokenChannelId = (
    await db.alertChannel.create({
      data: {
        organizationId,
        name: "broken hook",
        kind: "webhook",
        target: `http://127.0.0.1:${brokenPort}/`,
        secret: SECRET,
      },
    })
  ).id;
  await db.alertChannel.create({
    data: {
      organizationId,
      name: "ops mail",
      kind: "email",
      target: "oncall@alerts.example",
      minSeverity: "warning",
    },
  });

  // An operator who turned on notifications on their phone (as /settings/notifications does).
  pushService = await PushStandIn.start();
  const operatorId = (await db.user.create({ data: { email: "oncall@alerts.example" } })).id;
  await db.membership.create({ data: { organizationId, userId: operatorId, role: "operator" } });
  const pushChannel = await db.alertChannel.create({
    data: {
      organizationId,
      userId: operatorId,
      kind: "webpush",
      name: "web-push:phone",
      target: "127.0.0.1",
    },
  });
  await db.pushSubscription.create({
    data: {
      organizationId,
      userId: operatorId,
      channelId: pushChannel.id,
      endpoint: pushService.register(phone),
      p256dh: phone.p256dh,
      auth: phone.authBase64url,
    },
  });

  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          mails.push(mail);
          callback();
        })
        .catch(callback);
    },
  });
  const smtpPort = await freePort();
  smtp.listen(smtpPort, "127.0.0.1");
  await once(smtp.server, "listening");

  writer = writeCpu();
  gateway = await GatewayProcess.start({
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    MIMIR_URL,
    GATEWAY_HEALTH_INTERVAL_MS: "500",
    GATEWAY_ALERT_RELAY_SECRET: RELAY_SECRET,
    GATEWAY_CONSOLE_URL: "https://console.example",
    GATEWAY_ALERT_SYNC_MS: "300",
    GATEWAY_ALERT_DRIFT_CHECK_MS: "2000",
    GATEWAY_ALERT_SERIES_INTERVAL_MS: "1000",
    GATEWAY_ALERT_EVALUATION_INTERVAL_S: "1",
    GATEWAY_ALERT_GROUP_WAIT_S: "0",
    GATEWAY_ALERT_GROUP_INTERVAL_S: "1",
    GATEWAY_ALERT_DELIVERY_POLL_MS: "200",
    GATEWAY_ALERT_EVENT_POLL_MS: "300",
    GATEWAY_ALERT_BACKOFF_BASE_MS: "50",
    GATEWAY_ALERT_BACKOFF_MAX_MS: "200",
    GATEWAY_ALERT_DISABLE_AFTER_FAILURES: "3",
    GATEWAY_ALERT_WEBHOOK_ALLOW_PRIVATE: "true",
    GATEWAY_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    // The push stand-in's self-signed certificate, trusted the way an operator adds a private CA.
    NODE_EXTRA_CA_CERTS: pushService.caFile,
    EDGEFLEET_VAPID_PUBLIC_KEY: VAPID.publicKey,
    EDGEFLEET_VAPID_PRIVATE_KEY: VAPID.privateKey,
    EDGEFLEET_VAPID_SUBJECT: "mailto:ops@alerts.example",
    EDGEFLEET_PUSH_ACTION_SECRET: ACTION_SECRET,
  });
  // The relay URL Alertmanager calls is this gateway (its port is only known now): the default
  // (127.0.0.1 and GATEWAY_HTTP_PORT) is what it uses.
  await gateway.waitForReadyz(200);
}, 90_000);

afterAll(async () => {
  writing = false;
  await writer;
  await gateway?.kill();
  await Promise.all([
    new Promise((resolve) => receiver?.close(resolve)),
    new Promise((resolve) => brokenReceiver?.close(resolve)),
    new Promise((resolve) => smtp?.close(() => resolve(null))),
    pushService?.stop(),
  ]);
  if (organizationId) {
    await mimir("/api/v1/alerts", { method: "DELETE" }).catch(() => {});
    await mimir(`/prometheus/config/v1/rules/${RULE_NAMESPACE}`, { method: "DELETE" }).catch(() => {});
  }
  await database?.drop();
  await hub?.stop();
});

const firing = () =>
  hooks.filter((hook) => (JSON.parse(hook.body) as { type: string }).type === "alert.firing");

describe("alerts through Mimir's ruler and Alertmanager to the relay", () => {
  it("uploads the organization's Alertmanager config and its policy's rule group", async () => {
    const state = await waitFor(
      "the organization's alerting config applied",
      async () => {
        const row = await db.alertingState.findUnique({ where: { organizationId } });
        return row && row.appliedRevision >= 0 && row.lastError === null ? row : undefined;
      },
      30_000,
      200,
    );
    expect(state.appliedAt).not.toBeNull();
    const am = await mimir("/api/v1/alerts");
    expect(am.status).toBe(200);
    expect(am.text).toContain(`/alerts/relay/${organizationId}`);
    const rules = await mimir(`/prometheus/config/v1/rules/${RULE_NAMESPACE}`);
    expect(rules.text).toContain(ruleGroupName(policyId));
    expect(rules.text).toContain('label_tier="canary"');
  });

  it("a node's CPU crosses the threshold: a signed webhook, an e-mail and a Web Push arrive", async () => {
    const started = Date.now();
    cpu = 0.95;
    const hook = await waitFor("the firing webhook", () => firing()[0], 60_000, 200);
    const latencyMs = Date.now() - started;
    // Verifies id, timestamp and signature (throws otherwise), with either secret of the rotation.
    const headers = hook.headers as Record<string, string>;
    const payload = new Webhook(SECRET).verify(hook.body, headers) as {
      type: string;
      organizationId: string;
      alert: { labels: Record<string, string>; consoleUrl: string; severity: string };
    };
    expect(new Webhook(PREVIOUS).verify(hook.body, headers)).toEqual(payload);
    expect(() =>
      new Webhook(`whsec_${Buffer.from("somebody else").toString("base64")}`).verify(hook.body, headers),
    ).toThrow();
    expect(payload.type).toBe("alert.firing");
    expect(payload.organizationId).toBe(organizationId);
    expect(payload.alert.labels).toMatchObject({
      organization: organizationId,
      policy: policyId,
      node: nodeId,
      site: "plant-1",
      site_id: siteId,
      severity: "critical",
      alertname: "EdgefleetCpuHigh",
    });
    expect(payload.alert.consoleUrl).toBe(`https://console.example/nodes/${nodeId}`);
    const mail = await waitFor("the alert e-mail", () => mails[0], 30_000, 200);
    expect(mail.subject).toMatch(/FIRING critical/);
    expect(mail.text).toContain(`https://console.example/nodes/${nodeId}`);
    expect((mail.to as { text: string }).text).toBe("oncall@alerts.example");
    // Only the canary is in scope (press-2 has no samples, and is not a canary either).
    expect(
      new Set(
        firing().map(
          (h) => (JSON.parse(h.body) as { alert: { labels: { node: string } } }).alert.labels.node,
        ),
      ),
    ).toEqual(new Set([nodeId]));
    // The same alert on the operator's phone: VAPID-signed, decrypted with the phone's keys.
    const push = await waitFor(
      "the Web Push on the operator's phone",
      () =>
        pushService.received.find((r) => r.path === phone.path && r.payload?.includes('"status":"firing"')),
      30_000,
      200,
    );
    expect(push.vapidVerified).toBe(true);
    expect(push.vapidKey).toBe(VAPID.publicKey);
    const message = JSON.parse(push.payload ?? "null") as PushMessage;
    expect(message).toMatchObject({ v: 1, status: "firing", severity: "critical" });
    expect(message.url).toBe(`https://console.example/nodes/${nodeId}`);
    expect(message.actions.map((a) => a.action)).toContain("silence_1h");
    console.info(`alert latency, CPU crossing → signed webhook delivered: ${latencyMs} ms (policy for: 0)`);
  });

  it("logs every delivery attempt, and Alertmanager's re-send of the same alert is not delivered twice", async () => {
    const notification = await db.alertNotification.findFirstOrThrow({
      where: { channelId: hookChannelId, alertStatus: "firing" },
    });
    expect(notification.state).toBe("delivered");
    const log = await db.alertDelivery.findMany({ where: { notificationId: notification.id } });
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ ok: true, statusCode: 204, attempt: 1 });
    const alert = notification.alert as Record<string, unknown>;
    const resend = await fetch(`${gateway.baseUrl}/alerts/relay/${organizationId}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${relayToken(RELAY_SECRET, organizationId)}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ version: "4", status: "firing", alerts: [alert] }),
    });
    expect(resend.status).toBe(200);
    expect(await resend.json()).toMatchObject({ queued: 0, refused: 0 });
    const before = firing().length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(firing()).toHaveLength(before);
    expect(
      await db.alertNotification.count({ where: { channelId: hookChannelId, alertStatus: "firing" } }),
    ).toBe(1);
  });

  it("refuses a forged relay token, another organization's token, and alerts labelled with another organization", async () => {
    const post = (org: string, token: string, labels: Record<string, string>) =>
      fetch(`${gateway.baseUrl}/alerts/relay/${org}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          version: "4",
          alerts: [
            {
              status: "firing",
              labels,
              annotations: {},
              startsAt: new Date().toISOString(),
              fingerprint: "f0rged",
            },
          ],
        }),
      });
    const otherOrg = "0190f5a2-0000-7000-8000-00000000beef";
    expect((await post(organizationId, "forged", { organization: organizationId })).status).toBe(401);
    expect(
      (await post(organizationId, relayToken(RELAY_SECRET, otherOrg), { organization: organizationId }))
        .status,
    ).toBe(401);
    const smuggled = await post(organizationId, relayToken(RELAY_SECRET, organizationId), {
      organization: otherOrg,
      severity: "critical",
    });
    expect(await smuggled.json()).toMatchObject({ queued: 0, refused: 1 });
    const garbage = await fetch(`${gateway.baseUrl}/alerts/relay/${organizationId}`, {
      method: "POST",
      headers: { authorization: `Bearer ${relayToken(RELAY_SECRET, organizationId)}` },
      body: "{not json",
    });
    expect(garbage.status).toBe(400);
    expect(await db.alertNotification.count({ where: { idempotencyKey: { startsWith: "f0rged" } } })).toBe(0);
  });

  it("a receiver that keeps failing is retried with backoff, then its channel is switched off with the reason", async () => {
    const channel = await waitFor(
      "the broken channel switched off",
      async () => {
        const row = await db.alertChannel.findUniqueOrThrow({ where: { id: brokenChannelId } });
        return row.enabled ? undefined : row;
      },
      30_000,
      200,
    );
    expect(channel.disabledReason).toMatch(/3 failed deliveries in a row; last: receiver answered 500/);
    const attempts = await db.alertDelivery.findMany({
      where: { channelId: brokenChannelId },
      orderBy: { id: "asc" },
    });
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.every((attempt) => !attempt.ok && attempt.statusCode === 500)).toBe(true);
    // The healthy channel was not held up by the broken one.
    expect((await db.alertChannel.findUniqueOrThrow({ where: { id: hookChannelId } })).enabled).toBe(true);
  });

  it("the resolution is delivered when the CPU falls back", async () => {
    cpu = 0.1;
    const resolved = await waitFor(
      "the resolved webhook",
      () => hooks.find((hook) => (JSON.parse(hook.body) as { type: string }).type === "alert.resolved"),
      60_000,
      200,
    );
    expect(
      new Webhook(SECRET).verify(resolved.body, resolved.headers as Record<string, string>),
    ).toMatchObject({
      alert: { status: "resolved", labels: { node: nodeId } },
    });
  });

  it("repairs drift: an Alertmanager config removed behind its back is uploaded again", async () => {
    expect((await mimir("/api/v1/alerts", { method: "DELETE" })).status).toBeLessThan(300);
    await waitFor(
      "the Alertmanager config restored",
      async () =>
        (await mimir("/api/v1/alerts")).text.includes(`/alerts/relay/${organizationId}`) ? true : undefined,
      20_000,
      250,
    );
    const metrics = (await gateway.get("/metrics")).text;
    expect(metricValue(metrics, "edgefleet_gateway_alerting_drift_repairs_total")).toBeGreaterThanOrEqual(1);
  });

  it("a rule group Mimir refuses is a visible failure (status and metrics), repaired when the policy is", async () => {
    // Written past the API (which checks PromQL with Mimir first) to make Mimir refuse the rule.
    const broken = await db.alertPolicy.create({
      data: {
        organizationId,
        name: "broken",
        kind: "promql",
        spec: { kind: "promql", expr: "sum(rate(x[5m]", forMinutes: 0 },
        severity: "info",
      },
    });
    await db.alertingState.update({ where: { organizationId }, data: { revision: { increment: 1 } } });
    const failed = await waitFor(
      "the failure recorded",
      async () => {
        const row = await db.alertingState.findUniqueOrThrow({ where: { organizationId } });
        return row.lastError ? row : undefined;
      },
      20_000,
      200,
    );
    expect(failed.lastError).toMatch(/Mimir answered 400/);
    const metrics = (await gateway.get("/metrics")).text;
    expect(
      metricValue(metrics, 'edgefleet_gateway_alerting_syncs_total{result="error"}'),
    ).toBeGreaterThanOrEqual(1);
    await db.alertPolicy.delete({ where: { id: broken.id } });
    await db.alertingState.update({ where: { organizationId }, data: { revision: { increment: 1 } } });
    await waitFor(
      "back in sync",
      async () => {
        const row = await db.alertingState.findUniqueOrThrow({ where: { organizationId } });
        return row.lastError === null && row.appliedRevision === row.revision ? true : undefined;
      },
      40_000,
      200,
    );
  });

  it("a rollout paused is an event alert, posted to Alertmanager by the gateway and relayed like the rest", async () => {
    await db.alertPolicy.create({
      data: {
        organizationId,
        name: "paused rollouts",
        kind: "rollout_paused",
        spec: { kind: "rollout_paused" },
        siteId,
        severity: "warning",
      },
    });
    const app = await db.app.create({ data: { organizationId, name: "press-control" } });
    const version = await db.appVersion.create({
      data: {
        organizationId,
        appId: app.id,
        version: "2.0.0",
        artifactSource: "upload",
        artifactState: "ready",
        artifactSha256: "e".repeat(64),
        artifactSize: 10n,
        runSpec: { command: ["./press"] },
      },
    });
    const rollout = await db.rollout.create({
      data: {
        organizationId,
        appId: app.id,
        appVersionId: version.id,
        selector: "",
        siteIds: [siteId],
        status: "paused",
      },
    });
    await db.rolloutEvent.create({
      data: {
        organizationId,
        rolloutId: rollout.id,
        kind: "pause",
        message: "pause: error rate above the gate",
        actorType: "system",
        data: { from: "running", to: "paused" },
      },
    });
    const hook = await waitFor(
      "the rollout-paused webhook",
      () =>
        hooks
          .map((h) => ({
            h,
            body: JSON.parse(h.body) as {
              type: string;
              alert: { labels: Record<string, string>; consoleUrl: string };
            },
          }))
          .find(({ body }) => body.alert.labels.alertname === "EdgefleetRolloutPaused"),
      30_000,
      200,
    );
    new Webhook(SECRET).verify(hook.h.body, hook.h.headers as Record<string, string>);
    expect(hook.body.type).toBe("alert.firing");
    expect(hook.body.alert.labels).toMatchObject({
      organization: organizationId,
      rollout: rollout.id,
      app: "press-control",
      severity: "warning",
    });
    expect(hook.body.alert.consoleUrl).toBe(`https://console.example/rollouts/${rollout.id}`);
  });

  it("a node that goes offline fires its node_offline policy (liveness series written by the gateway)", async () => {
    await db.alertPolicy.create({
      data: {
        organizationId,
        name: "stable presses down",
        kind: "node_offline",
        spec: { kind: "node_offline", forMinutes: 0 },
        selector: "tier=stable",
        severity: "critical",
      },
    });
    await db.alertingState.update({ where: { organizationId }, data: { revision: { increment: 1 } } });
    // What the gateway's offline sweeper writes when a node's heartbeats stop.
    await db.node.update({ where: { id: stableNodeId }, data: { status: "offline" } });
    const hook = await waitFor(
      "the node-offline webhook",
      () =>
        hooks
          .map(
            (h) =>
              JSON.parse(h.body) as {
                type: string;
                alert: { labels: Record<string, string>; consoleUrl: string };
              },
          )
          .find((body) => body.alert.labels.alertname === "EdgefleetNodeOffline"),
      30_000,
      200,
    );
    expect(hook.alert.labels).toMatchObject({
      node: stableNodeId,
      site: "plant-1",
      site_id: siteId,
      kind: "node_offline",
    });
    expect(hook.alert.consoleUrl).toBe(`https://console.example/nodes/${stableNodeId}`);
  });
});
