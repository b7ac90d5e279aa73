import type { Db } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAlertingMetrics } from "../src/alerts/alerting-metrics.js";
import { AdvisoryLeader } from "../src/alerts/leader.js";
import { OutboxCleanup } from "../src/alerts/outbox-cleanup.js";
import { createLogger } from "../src/logger.js";

/** The outbox retention on real Postgres: finished rows past it go (with their delivery log), the rest stay. */
let database: TestDatabase;
let db: Db;
let leader: AdvisoryLeader;
let organizationId: string;
let channelId: string;

const DAY = 86_400_000;

beforeAll(async () => {
  database = await createMigratedDatabase();
  db = database.db;
  leader = new AdvisoryLeader(database.url, 0x0a1e_99);
  organizationId = (await db.organization.create({ data: { slug: "cleanup", name: "Cleanup" } })).id;
  channelId = (
    await db.alertChannel.create({
      data: { organizationId, kind: "email", name: "ops", target: "ops@cleanup.example" },
    })
  ).id;
});

afterAll(async () => {
  await leader?.release();
  await database?.drop();
});

async function notification(key: string, state: string, ageMs: number) {
  const row = await db.alertNotification.create({
    data: {
      organizationId,
      channelId,
      idempotencyKey: key,
      alertStatus: "firing",
      alert: { labels: {}, annotations: {} },
      state,
      createdAt: new Date(Date.now() - ageMs),
    },
  });
  await db.alertDelivery.create({
    data: {
      organizationId,
      notificationId: row.id,
      channelId,
      attempt: 1,
      ok: state === "delivered",
      durationMs: 5,
    },
  });
  return row.id;
}

describe("alert outbox cleanup", () => {
  it("deletes finished notifications older than the retention and their delivery log; keeps pending and recent ones", async () => {
    const old = {
      delivered: await notification("a", "delivered", 31 * DAY),
      failed: await notification("b", "failed", 31 * DAY),
      dropped: await notification("c", "dropped", 40 * DAY),
    };
    const kept = {
      pendingOld: await notification("d", "pending", 31 * DAY),
      deliveredRecent: await notification("e", "delivered", 29 * DAY),
    };
    const registry = new Registry();
    const metrics = createAlertingMetrics(registry);
    const cleanup = new OutboxCleanup(
      db,
      leader,
      { retentionMs: 30 * DAY, intervalMs: 3_600_000 },
      metrics,
      createLogger("silent"),
    );
    expect(await cleanup.tick()).toBe(3);
    const left = (await db.alertNotification.findMany({ select: { id: true } })).map((row) => row.id).sort();
    expect(left).toEqual(Object.values(kept).sort());
    expect(await db.alertDelivery.count({ where: { notificationId: { in: Object.values(old) } } })).toBe(0);
    expect(await db.alertDelivery.count()).toBe(2);
    expect(
      (await registry.getSingleMetric("edgefleet_gateway_alert_outbox_deleted_total")?.get())?.values[0]
        ?.value,
    ).toBe(3);
    // Nothing more to do: a second pass deletes nothing.
    expect(await cleanup.tick()).toBe(0);
  });
});
