/**
 * Status history, availability, degraded, the live "fleet changed" signal, and top bandwidth:
 * real Postgres (history written by the same SQL the gateway uses) and real Mimir.
 */
import { randomUUID } from "node:crypto";
import {
  approveNode,
  type Db,
  FleetChangeFeed,
  Prisma,
  tenantDb,
  updateNodesWithStatusEvents,
} from "@edgefleet/db";
import { pushTimeseries } from "prometheus-remote-write";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiSession, createCaller, createTRPCContext } from "../src";
import { topBandwidthConsumers } from "../src/domain/metrics";
import { addMember, ORG, OTHER_ORG } from "./actors";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let alice: ApiSession;
let viewer: ApiSession;
let bob: ApiSession;
let acmeId: string;
let globexId: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  alice = await sessionOf(db, "alice@acme.example");
  viewer = await addMember(db, ORG, "viewer", "vic@acme.example");
  bob = await sessionOf(db, "bob@globex.example");
  acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: ORG } })).id;
  globexId = (await db.organization.findUniqueOrThrow({ where: { slug: OTHER_ORG } })).id;
});

afterAll(async () => {
  await testDb?.drop();
});

async function newNode(organizationId: string, status: "pending" | "online" | "offline" = "offline") {
  return db.node.create({
    data: { organizationId, name: `ev-${randomUUID().slice(0, 8)}`, status },
  });
}

/** Flips one node's status through the same statement the gateway uses. */
function flip(nodeId: string, to: "online" | "offline", reason: "hello" | "heartbeat_timeout") {
  return updateNodesWithStatusEvents(db, {
    where: Prisma.sql`id = ${nodeId}::uuid`,
    set: Prisma.sql`status = ${to}::node_status, updated_at = now()`,
    reason,
  });
}

describe("node.statusHistory", () => {
  it("pages a node's changes newest first with a cursor, each change once", async () => {
    const node = await newNode(acmeId);
    for (let i = 0; i < 5; i++) {
      await flip(node.id, "online", "hello");
      await flip(node.id, "online", "hello"); // no change: no row
      await flip(node.id, "offline", "heartbeat_timeout");
    }
    const caller = callerFor(db, viewer, ORG);
    const first = await caller.node.statusHistory({ nodeId: node.id, limit: 4 });
    expect(first.items.map((e) => e.to)).toEqual(["offline", "online", "offline", "online"]);
    expect(first.items[0]).toMatchObject({
      nodeName: node.name,
      from: "online",
      reason: "heartbeat_timeout",
    });
    expect(first.nextCursor).not.toBeNull();
    const rest = await caller.node.statusHistory({
      nodeId: node.id,
      limit: 50,
      cursor: first.nextCursor ?? "",
    });
    expect(rest.items).toHaveLength(6);
    expect(rest.nextCursor).toBeNull();
    const ids = [...first.items, ...rest.items].map((e) => BigInt(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => (a > b ? -1 : 1)));
  });

  it("answers a bad cursor and a bad id with input errors, and another tenant's node with NOT_FOUND", async () => {
    const node = await newNode(acmeId);
    const caller = callerFor(db, alice, ORG);
    await expect(caller.node.statusHistory({ nodeId: node.id, cursor: "abc" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(caller.node.statusHistory({ nodeId: "not-a-uuid" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(callerFor(db, bob, OTHER_ORG).node.statusHistory({ nodeId: node.id })).rejects.toMatchObject(
      {
        code: "NOT_FOUND",
      },
    );
    await expect(
      callerFor(db, bob, OTHER_ORG).node.availability({
        nodeId: node.id,
        range: { from: new Date(Date.now() - 3_600_000), to: new Date() },
      }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("fleet.events", () => {
  it("lists only the caller's organization's changes", async () => {
    const acmeNode = await newNode(acmeId);
    const globexNode = await newNode(globexId);
    await flip(acmeNode.id, "online", "hello");
    await flip(globexNode.id, "online", "hello");
    const acme = await callerFor(db, viewer, ORG).fleet.events({ limit: 200 });
    const globex = await callerFor(db, bob, OTHER_ORG).fleet.events({ limit: 200 });
    expect(acme.items.map((e) => e.nodeId)).toContain(acmeNode.id);
    expect(acme.items.map((e) => e.nodeId)).not.toContain(globexNode.id);
    expect(globex.items.map((e) => e.nodeId)).toContain(globexNode.id);
    expect(globex.items.map((e) => e.nodeId)).not.toContain(acmeNode.id);
  });

  it("records approval with its reason", async () => {
    const node = await newNode(acmeId, "pending");
    await callerFor(db, alice, ORG).enrollment.approveNode({ nodeId: node.id });
    const history = await callerFor(db, alice, ORG).node.statusHistory({ nodeId: node.id });
    expect(history.items).toMatchObject([{ from: "pending", to: "offline", reason: "approved" }]);
  });
});

describe("node.availability", () => {
  it("draws the range as segments from the history, with the online share", async () => {
    const node = await newNode(acmeId);
    const t0 = Date.now() - 10 * 3_600_000;
    await db.node.update({ where: { id: node.id }, data: { enrolledAt: new Date(t0 - 3_600_000) } });
    const at = (hours: number) => new Date(t0 + hours * 3_600_000);
    await db.nodeStatusEvent.createMany({
      data: [
        {
          organizationId: acmeId,
          nodeId: node.id,
          fromStatus: "offline",
          toStatus: "online",
          reason: "hello",
          at: at(-0.5),
        },
        {
          organizationId: acmeId,
          nodeId: node.id,
          fromStatus: "online",
          toStatus: "offline",
          reason: "heartbeat_timeout",
          at: at(2),
        },
        {
          organizationId: acmeId,
          nodeId: node.id,
          fromStatus: "offline",
          toStatus: "online",
          reason: "hello",
          at: at(3),
        },
      ],
    });
    const result = await callerFor(db, viewer, ORG).node.availability({
      nodeId: node.id,
      range: { from: at(0), to: at(4) },
    });
    expect(result.segments.map((s) => [s.status, s.from.getTime(), s.to.getTime()])).toEqual([
      ["online", at(0).getTime(), at(2).getTime()],
      ["offline", at(2).getTime(), at(3).getTime()],
      ["online", at(3).getTime(), at(4).getTime()],
    ]);
    expect(result.onlineRatio).toBeCloseTo(0.75, 5);
  });

  it("marks the time before enrollment as unknown, and refuses ranges past the retention", async () => {
    const node = await newNode(acmeId);
    const now = Date.now();
    await db.node.update({ where: { id: node.id }, data: { enrolledAt: new Date(now - 3_600_000) } });
    const caller = callerFor(db, viewer, ORG);
    const result = await caller.node.availability({
      nodeId: node.id,
      range: { from: new Date(now - 2 * 3_600_000), to: new Date(now) },
    });
    expect(result.segments.map((s) => s.status)).toEqual([null, "offline"]);
    expect(result.onlineRatio).toBe(0);
    await expect(
      caller.node.availability({
        nodeId: node.id,
        range: { from: new Date(now - 40 * 86_400_000), to: new Date(now) },
      }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});

describe("degraded", () => {
  it("counts online nodes with a failed app, never offline ones, and says why on the node", async () => {
    const caller = callerFor(db, viewer, ORG);
    const before = (await caller.node.counts()).degraded;
    const instance = await db.appInstance.findFirstOrThrow({
      where: { organizationId: acmeId, node: { status: "online" } },
      select: { id: true, nodeId: true, app: { select: { name: true } } },
    });
    await db.appInstance.update({ where: { id: instance.id }, data: { state: "failed" } });
    expect((await caller.node.counts()).degraded).toBe(before + 1);
    const detail = await caller.node.byId({ id: instance.nodeId });
    expect(detail.degradedReasons).toEqual([`app ${instance.app.name} failed`]);

    await db.node.update({ where: { id: instance.nodeId }, data: { status: "offline" } });
    expect((await caller.node.counts()).degraded).toBe(before);
    expect((await caller.node.byId({ id: instance.nodeId })).degradedReasons).toEqual([]);
  });
});

describe("fleet.changes (live signal)", () => {
  it("signals the subscriber's organization only, coalescing a burst", async () => {
    const feed = new FleetChangeFeed(testDb.url, { minIntervalMs: 500 });
    try {
      await feed.ready();
      const abort = new AbortController();
      const caller = createCaller(
        createTRPCContext({ db, session: viewer, activeOrganizationSlug: ORG, fleetChanges: feed }),
        { signal: abort.signal },
      );
      const stream = await caller.fleet.changes();
      const received: Date[] = [];
      const reading = (async () => {
        for await (const change of stream) received.push(change.at);
      })();

      // Another organization's change: nothing for acme.
      await approveNode(db, globexId, (await newNode(globexId, "pending")).id);
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(received).toHaveLength(0);

      // A burst of 20 changes in acme: at least one signal, far fewer than 20.
      const nodes = await Promise.all(Array.from({ length: 20 }, () => newNode(acmeId, "pending")));
      for (const node of nodes) await approveNode(db, acmeId, node.id);
      await expect.poll(() => received.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect(received.length).toBeLessThanOrEqual(4);

      abort.abort();
      await reading;
    } finally {
      await feed.stop();
    }
  });

  it("is refused to a member of another organization before any signal flows", async () => {
    const caller = createCaller(createTRPCContext({ db, session: bob, activeOrganizationSlug: ORG }));
    await expect(caller.fleet.changes()).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("metrics.topBandwidth", () => {
  const MIMIR_URL = process.env.MIMIR_URL;

  it("ranks nodes by bytes moved in the window, split into received and transmitted", async () => {
    if (!MIMIR_URL) throw new Error("MIMIR_URL must point at the stack's Mimir");
    // A fresh organization is a fresh Mimir tenant: no samples from earlier runs.
    const organization = await db.organization.create({
      data: { slug: `bw-${randomUUID().slice(0, 8)}`, name: "bw" },
    });
    const nodes = await Promise.all([0, 1, 2].map(() => newNode(organization.id)));
    const now = Math.floor(Date.now() / 1000) * 1000;
    const times = [now - 20 * 60_000, now - 10 * 60_000, now - 60_000];
    // Node i receives (i+1) MB and sends (i+1)/2 MB per 10 minutes.
    const series = nodes.flatMap((node, i) =>
      (["receive", "transmit"] as const).map((direction) => ({
        labels: {
          __name__: `edgefleet_node_network_${direction}_bytes_total`,
          org: organization.id,
          node: node.id,
          interface: "eth0",
        },
        samples: times.map((timestamp, k) => ({
          timestamp,
          value: k * (i + 1) * (direction === "receive" ? 1e6 : 5e5),
        })),
      })),
    );
    const result = await pushTimeseries(series, {
      url: new URL("/api/v1/push", MIMIR_URL).toString(),
      headers: { "X-Scope-OrgID": organization.id },
      fetch: (url, init) =>
        fetch(url, { method: "POST", headers: init?.headers, body: init?.body as unknown as Uint8Array }),
    });
    expect(result.status).toBe(200);

    const top = await topBandwidthConsumers(MIMIR_URL, tenantDb(db, organization.id), organization.id, {
      window: "1h",
      limit: 2,
    });
    expect(top.items.map((item) => item.nodeName)).toEqual([nodes[2]?.name, nodes[1]?.name]);
    const first = top.items[0];
    // increase() extrapolates a little past the first and last samples: compare the split, not exact bytes.
    expect(first?.receiveBytes).toBeGreaterThan(5.5e6);
    expect((first?.receiveBytes ?? 0) / (first?.transmitBytes ?? 1)).toBeCloseTo(2, 1);
    expect(first?.totalBytes).toBeCloseTo((first?.receiveBytes ?? 0) + (first?.transmitBytes ?? 0), 0);

    // Another tenant sees none of it.
    const other = await topBandwidthConsumers(MIMIR_URL, tenantDb(db, globexId), globexId, {
      window: "1h",
      limit: 10,
    });
    expect(other.items.map((item) => item.nodeId)).not.toContain(nodes[2]?.id);
  });
});
