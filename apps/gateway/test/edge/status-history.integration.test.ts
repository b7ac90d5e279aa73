import { type Db, FLEET_CHANGED_CHANNEL, pruneStatusEvents } from "@edgefleet/db";
import pg from "pg";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEdgeMetrics } from "../../src/edge/edge-metrics.js";
import { HeartbeatBatcher } from "../../src/edge/liveness/heartbeat-batcher.js";
import { OfflineSweeper } from "../../src/edge/liveness/offline-sweeper.js";
import { livenessTiming } from "../../src/edge/liveness/timing.js";
import { createTestDatabase } from "../support/edge-harness.js";

const timing = livenessTiming(1_000, 200);
const silent = pino({ level: "silent" });
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Db;
let listener: pg.Client;
const notifications: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
  listener = new pg.Client({ connectionString: database.url });
  await listener.connect();
  listener.on("notification", (message) => {
    if (message.channel === FLEET_CHANGED_CHANNEL) notifications.push(message.payload ?? "");
  });
  await listener.query(`LISTEN ${FLEET_CHANGED_CHANNEL}`);
});
afterAll(async () => {
  await listener?.end();
  await database?.drop();
});

async function fleet(slug: string, size: number) {
  const organization = await db.organization.create({ data: { slug, name: slug } });
  await db.node.createMany({
    data: Array.from({ length: size }, (_, i) => ({
      organizationId: organization.id,
      name: `${slug}-${i}`,
      status: "offline" as const,
    })),
  });
  const nodes = await db.node.findMany({ where: { organizationId: organization.id }, select: { id: true } });
  return { organizationId: organization.id, ids: nodes.map((node) => node.id) };
}

const eventsOf = (ids: string[]) =>
  db.nodeStatusEvent.findMany({ where: { nodeId: { in: ids } }, orderBy: { id: "asc" } });

/** Notifications are asynchronous: wait until `count` arrived for the organization (or time out). */
async function notificationsFor(organizationId: string, count: number): Promise<number> {
  await expect
    .poll(() => notifications.filter((n) => n === organizationId).length, { timeout: 10_000 })
    .toBeGreaterThanOrEqual(count);
  return notifications.filter((n) => n === organizationId).length;
}

describe("status history written by the liveness batches", () => {
  it("a heartbeat batch records each offline→online change once; a repeated batch records nothing", async () => {
    const { organizationId, ids } = await fleet("hist-a", 40);
    const batcher = new HeartbeatBatcher(db, timing, createEdgeMetrics(new Registry()), silent);
    for (const id of ids) batcher.see(id);
    await batcher.flush();

    const events = await eventsOf(ids);
    expect(events).toHaveLength(40);
    expect(new Set(events.map((e) => e.nodeId))).toEqual(new Set(ids));
    for (const event of events) {
      expect(event).toMatchObject({
        organizationId,
        fromStatus: "offline",
        toStatus: "online",
        reason: "heartbeat",
      });
    }
    // One notification for the whole batch, not one per node.
    expect(await notificationsFor(organizationId, 1)).toBe(1);

    // Redelivered / duplicate batch, and a batch after last_seen_at went stale (a refresh, no change).
    for (const id of ids) batcher.see(id);
    await batcher.flush();
    await db.node.updateMany({
      where: { id: { in: ids } },
      data: { lastSeenAt: new Date(Date.now() - 60_000) },
    });
    for (const id of ids) batcher.see(id);
    await batcher.flush();
    expect(await eventsOf(ids)).toHaveLength(40);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(notifications.filter((n) => n === organizationId)).toHaveLength(1);
  });

  it("two replicas flushing the same nodes at once still record each change exactly once", async () => {
    const { ids } = await fleet("hist-b", 30);
    const replicas = [1, 2, 3].map(
      () => new HeartbeatBatcher(db, timing, createEdgeMetrics(new Registry()), silent),
    );
    for (const batcher of replicas) for (const id of ids) batcher.see(id);
    await Promise.all(replicas.map((batcher) => batcher.flush()));
    const events = await eventsOf(ids);
    expect(events).toHaveLength(30);
    expect(new Set(events.map((e) => e.nodeId)).size).toBe(30);
  });

  it("the sweeper records online→offline once, and notifies each organization once per sweep", async () => {
    const a = await fleet("hist-c", 20);
    const b = await fleet("hist-d", 5);
    const all = [...a.ids, ...b.ids];
    await db.node.updateMany({
      where: { id: { in: all } },
      data: { status: "online", lastSeenAt: new Date(Date.now() - 3_600_000) },
    });
    const sweeper = new OfflineSweeper(db, timing, createEdgeMetrics(new Registry()), silent);
    const swept = await sweeper.sweep();
    expect(new Set(swept)).toEqual(new Set(all));
    expect(await sweeper.sweep()).toEqual([]);

    const events = await eventsOf(all);
    expect(events).toHaveLength(25);
    for (const event of events) {
      expect(event).toMatchObject({ fromStatus: "online", toStatus: "offline", reason: "heartbeat_timeout" });
    }
    expect(events.filter((e) => e.organizationId === b.organizationId)).toHaveLength(5);
    expect(await notificationsFor(a.organizationId, 1)).toBe(1);
    expect(await notificationsFor(b.organizationId, 1)).toBe(1);
  });

  it("a revoked node is never brought back online by a late heartbeat, and that writes no history", async () => {
    const { ids } = await fleet("hist-e", 1);
    await db.node.update({ where: { id: ids[0] }, data: { status: "revoked" } });
    const batcher = new HeartbeatBatcher(db, timing, createEdgeMetrics(new Registry()), silent);
    batcher.see(ids[0] ?? "");
    await batcher.flush();
    expect(await eventsOf(ids)).toHaveLength(0);
    expect((await db.node.findUniqueOrThrow({ where: { id: ids[0] } })).status).toBe("revoked");
  });

  it("retention prunes history older than 30 days and keeps the rest", async () => {
    const { organizationId, ids } = await fleet("hist-f", 1);
    const nodeId = ids[0] ?? "";
    const day = 24 * 3_600_000;
    await db.nodeStatusEvent.createMany({
      data: [40, 31, 29, 1].map((days) => ({
        organizationId,
        nodeId,
        fromStatus: "offline" as const,
        toStatus: "online" as const,
        reason: "heartbeat",
        at: new Date(Date.now() - days * day),
      })),
    });
    expect(await pruneStatusEvents(db, { limit: 1 })).toBe(1);
    expect(await pruneStatusEvents(db)).toBe(1);
    expect(await pruneStatusEvents(db)).toBe(0);
    const left = await eventsOf([nodeId]);
    expect(left.map((e) => Math.round((Date.now() - e.at.getTime()) / day))).toEqual([29, 1]);
  });
});
