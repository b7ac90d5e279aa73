import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../src/client";
import { connectionConfigFromUrl } from "../src/connection";
import { desiredDeltasSince } from "../src/desired-deltas";
import {
  DESIRED_REVISION_CHANNEL,
  DesiredStateError,
  desiredDeltaSince,
  setDesiredApps,
} from "../src/desired-state";
import { nodeIdsOfNotification, notifyPayloads, setDesiredAppsForNodes } from "../src/desired-state-batch";
import { createMigratedDatabase, type TestDatabase } from "./support/test-database";

// setDesiredAppsForNodes must be setDesiredApps applied to each node, only faster. Two
// organizations get the same apps and versions and mirrored nodes: random changes go through the
// batch function in one and the per-node function in the other, and their states must agree.

let database: TestDatabase;
let db: Db;

interface Catalog {
  organizationId: string;
  /** app name -> app id */
  apps: Map<string, string>;
  /** "app@version" -> version id */
  versions: Map<string, string>;
}
const APPS = ["web", "db", "cache", "agent"] as const;
const VERSIONS = ["1.0", "2.0", "3.0"] as const;

async function createCatalog(slug: string): Promise<Catalog> {
  const organization = await db.organization.create({ data: { slug, name: slug } });
  const catalog: Catalog = { organizationId: organization.id, apps: new Map(), versions: new Map() };
  for (const name of APPS) {
    const app = await db.app.create({ data: { organizationId: organization.id, name } });
    catalog.apps.set(name, app.id);
    for (const version of VERSIONS) {
      const row = await db.appVersion.create({
        data: {
          organizationId: organization.id,
          appId: app.id,
          version,
          artifactUrl: `https://a.test/${name}-${version}`,
          runSpec: { command: [name] },
        },
      });
      catalog.versions.set(`${name}@${version}`, row.id);
    }
  }
  return catalog;
}

async function createNodes(catalog: Catalog, prefix: string, count: number): Promise<string[]> {
  const rows = await db.node.createManyAndReturn({
    data: Array.from({ length: count }, (_, i) => ({
      organizationId: catalog.organizationId,
      name: `${prefix}-${String(i).padStart(5, "0")}`,
    })),
    select: { id: true, name: true },
  });
  return rows.sort((a, b) => a.name.localeCompare(b.name)).map((row) => row.id);
}

/** mulberry32: a tiny seeded generator, so a failing case can be replayed from its seed. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface AbstractChange {
  put: Array<[app: string, version: string]>;
  del: string[];
}

/** A random valid change: each app at most once, put or deleted or left alone. */
function randomChange(next: () => number): AbstractChange {
  const change: AbstractChange = { put: [], del: [] };
  for (const app of APPS) {
    const roll = next();
    if (roll < 0.35) change.put.push([app, VERSIONS[Math.floor(next() * VERSIONS.length)] as string]);
    else if (roll < 0.55) change.del.push(app);
  }
  return change;
}

function concrete(catalog: Catalog, change: AbstractChange) {
  return {
    put: change.put.map(([app, version]) => catalog.versions.get(`${app}@${version}`) as string),
    del: change.del.map((app) => catalog.apps.get(app) as string),
  };
}

/** A node's state by names (comparable across the two organizations). */
async function snapshot(nodeId: string) {
  const node = await db.node.findUniqueOrThrow({ where: { id: nodeId }, select: { desiredRevision: true } });
  const instances = await db.appInstance.findMany({
    where: { nodeId },
    select: {
      app: { select: { name: true } },
      desiredVersion: { select: { version: true } },
      desiredRevision: true,
    },
  });
  const removals = await db.desiredAppRemoval.findMany({
    where: { nodeId },
    select: { appName: true, desiredRevision: true },
  });
  const deltas = [];
  for (let from = 0; from <= node.desiredRevision; from++) {
    const delta = await desiredDeltaSince(db, nodeId, from);
    deltas.push(delta && { ...delta, put: delta.put.map((spec) => `${spec.app}@${spec.version}`) });
  }
  return {
    revision: node.desiredRevision,
    instances: instances.map((i) => `${i.app.name}@${i.desiredVersion.version}#${i.desiredRevision}`).sort(),
    removals: removals.map((r) => `${r.appName}#${r.desiredRevision}`).sort(),
    deltas,
  };
}

let batchSide: Catalog;
let singleSide: Catalog;
let foreign: Catalog;

beforeAll(async () => {
  database = await createMigratedDatabase();
  db = database.db;
  batchSide = await createCatalog("batch-side");
  singleSide = await createCatalog("single-side");
  foreign = await createCatalog("foreign");
});
afterAll(async () => {
  await database?.drop();
});

// Property-style comparisons run hundreds of transactions one after the other: on a loaded
// two-core machine that takes over the 30 s default, so the two longest get a larger timeout.
describe("setDesiredAppsForNodes", () => {
  it("is setDesiredApps applied to each node, over random states and changes", async () => {
    const NODES = 12;
    for (const seed of [1, 2, 3, 4]) {
      const next = random(seed);
      const batchNodes = await createNodes(batchSide, `s${seed}`, NODES);
      const singleNodes = await createNodes(singleSide, `s${seed}`, NODES);
      // Random starting states, set per node on both sides (revisions, instances, tombstones).
      for (let i = 0; i < NODES; i++) {
        const steps = Math.floor(next() * 4);
        for (let s = 0; s < steps; s++) {
          const change = randomChange(next);
          await setDesiredApps(
            db,
            batchSide.organizationId,
            batchNodes[i] as string,
            concrete(batchSide, change),
          );
          await setDesiredApps(
            db,
            singleSide.organizationId,
            singleNodes[i] as string,
            concrete(singleSide, change),
          );
        }
      }
      // Then a few changes to random subsets: batch on one side, per node on the other.
      for (let round = 0; round < 3; round++) {
        const change = randomChange(next);
        const picked = Array.from({ length: NODES }, (_, i) => i).filter(() => next() < 0.7);
        const batchResults = await setDesiredAppsForNodes(
          db,
          batchSide.organizationId,
          picked.map((i) => batchNodes[i] as string),
          concrete(batchSide, change),
        );
        const singleResults = [];
        for (const i of picked) {
          singleResults.push(
            await setDesiredApps(
              db,
              singleSide.organizationId,
              singleNodes[i] as string,
              concrete(singleSide, change),
            ),
          );
        }
        expect(
          batchResults.map((r) => ({ revision: r.revision, changed: r.changed })),
          `seed ${seed} round ${round}`,
        ).toEqual(singleResults);
        expect(batchResults.map((r) => r.nodeId)).toEqual(picked.map((i) => batchNodes[i]));
      }
      for (let i = 0; i < NODES; i++) {
        expect(await snapshot(batchNodes[i] as string), `seed ${seed} node ${i}`).toEqual(
          await snapshot(singleNodes[i] as string),
        );
      }
    }
  }, 180_000);

  it("gives new instances time-ordered UUIDv7 ids, like Prisma's uuid(7)", async () => {
    const [nodeId] = await createNodes(batchSide, "uuid", 1);
    await setDesiredAppsForNodes(db, batchSide.organizationId, [nodeId as string], {
      put: [batchSide.versions.get("web@1.0") as string],
    });
    const instance = await db.appInstance.findFirstOrThrow({ where: { nodeId } });
    expect(instance.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const millis = Number.parseInt(instance.id.replaceAll("-", "").slice(0, 12), 16);
    expect(Math.abs(millis - Date.now())).toBeLessThan(60_000);
  });

  it("refuses another tenant's nodes, versions or apps, and bad ids, changing nothing", async () => {
    const own = await createNodes(batchSide, "tenant", 3);
    const theirs = await createNodes(foreign, "tenant", 2);
    const web = batchSide.versions.get("web@1.0") as string;
    const before = await Promise.all([...own, ...theirs].map((id) => snapshot(id)));

    await expect(
      setDesiredAppsForNodes(db, batchSide.organizationId, [...own, theirs[0] as string], { put: [web] }),
    ).rejects.toThrow(/nodes not found in organization/);
    await expect(setDesiredAppsForNodes(db, foreign.organizationId, theirs, { put: [web] })).rejects.toThrow(
      /app versions not found/,
    );
    await expect(
      setDesiredAppsForNodes(db, foreign.organizationId, theirs, {
        del: [batchSide.apps.get("web") as string],
      }),
    ).rejects.toThrow(/apps not found/);
    await expect(
      setDesiredAppsForNodes(db, batchSide.organizationId, ["nope"], { put: [web] }),
    ).rejects.toThrow(DesiredStateError);
    await expect(
      setDesiredAppsForNodes(db, batchSide.organizationId, own, {
        put: [web, batchSide.versions.get("web@2.0") as string],
      }),
    ).rejects.toThrow(/same app/);
    expect(await Promise.all([...own, ...theirs].map((id) => snapshot(id)))).toEqual(before);
    expect(await setDesiredAppsForNodes(db, batchSide.organizationId, [], { put: [web] })).toEqual([]);
  });

  it("notifies every changed node, packed into payloads under Postgres' limit", async () => {
    const nodes = await createNodes(batchSide, "notify", 500);
    const listener = new pg.Client(connectionConfigFromUrl(database.url));
    await listener.connect();
    try {
      const payloads: string[] = [];
      listener.on("notification", (message) => payloads.push(message.payload ?? ""));
      await listener.query(`LISTEN ${DESIRED_REVISION_CHANNEL}`);
      const put = [batchSide.versions.get("cache@1.0") as string];
      // The first 100 already run it: unchanged, no revision, no notification.
      await setDesiredAppsForNodes(db, batchSide.organizationId, nodes.slice(0, 100), { put });
      await new Promise((resolve) => setTimeout(resolve, 300));
      payloads.length = 0;
      const results = await setDesiredAppsForNodes(db, batchSide.organizationId, nodes, { put });
      expect(results.filter((r) => r.changed)).toHaveLength(400);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(payloads.length).toBeGreaterThan(1);
      expect(payloads.every((p) => Buffer.byteLength(p) <= 7_900)).toBe(true);
      expect(payloads.flatMap(nodeIdsOfNotification).sort()).toEqual(nodes.slice(100).sort());
    } finally {
      await listener.end();
    }
  });

  it("packs and unpacks payloads, and reads a single id as a list of one", () => {
    const ids = Array.from(
      { length: 450 },
      (_, i) => `0190d2a4-0000-7000-8000-${String(i).padStart(12, "0")}`,
    );
    const payloads = notifyPayloads(ids);
    expect(payloads).toHaveLength(3);
    expect(payloads.flatMap(nodeIdsOfNotification)).toEqual(ids);
    expect(nodeIdsOfNotification(ids[0] as string)).toEqual([ids[0]]);
    expect(nodeIdsOfNotification("not-a-node,;DROP")).toEqual([]);
  });

  it("runs beside setDesiredApps on the same nodes without deadlock or lost revisions", async () => {
    const nodes = await createNodes(batchSide, "race", 120);
    const v = (key: string) => batchSide.versions.get(key) as string;
    const work: Array<Promise<unknown>> = [];
    // Batches in both orders plus per-node changes, all at once: each call must commit, and every
    // changing call raises each node's revision by exactly one.
    work.push(setDesiredAppsForNodes(db, batchSide.organizationId, nodes, { put: [v("web@1.0")] }));
    work.push(
      setDesiredAppsForNodes(db, batchSide.organizationId, [...nodes].reverse(), { put: [v("db@1.0")] }),
    );
    for (const nodeId of nodes.slice(0, 30)) {
      work.push(setDesiredApps(db, batchSide.organizationId, nodeId, { put: [v("agent@1.0")] }));
    }
    work.push(
      setDesiredAppsForNodes(db, batchSide.organizationId, nodes.slice(20, 100), { put: [v("cache@2.0")] }),
    );
    await Promise.all(work);
    for (const [i, nodeId] of nodes.entries()) {
      const state = await snapshot(nodeId);
      const expected = [
        "web@1.0",
        "db@1.0",
        ...(i < 30 ? ["agent@1.0"] : []),
        ...(i >= 20 && i < 100 ? ["cache@2.0"] : []),
      ];
      expect(state.revision, `node ${i}`).toBe(expected.length);
      expect(state.instances.map((s) => s.split("#")[0]).sort()).toEqual(expected.sort());
      // Each change has its own revision: 1..n, no two instances stamped alike.
      expect(state.instances.map((s) => Number(s.split("#")[1])).sort()).toEqual(
        Array.from({ length: expected.length }, (_, k) => k + 1),
      );
    }
  });

  it("reads many nodes' deltas at once exactly as desiredDeltaSince reads each", async () => {
    // Every node the tests above left behind, from revisions before, at and beyond their own.
    const nodes = await db.node.findMany({
      where: { organizationId: { in: [batchSide.organizationId, singleSide.organizationId] } },
      select: { id: true, desiredRevision: true, wireId: true, organization: { select: { wireId: true } } },
    });
    expect(nodes.length).toBeGreaterThan(100);
    const requests = nodes.flatMap((node) =>
      [-1, 0, 1, 2, node.desiredRevision, node.desiredRevision + 3].map((fromRevision) => ({
        nodeId: node.id,
        fromRevision,
      })),
    );
    const batched = [];
    for (let i = 0; i < requests.length; i += 500) {
      batched.push(...(await desiredDeltasSince(db, requests.slice(i, i + 500))));
    }
    expect(batched).toHaveLength(requests.length);
    let deltas = 0;
    for (const [i, request] of requests.entries()) {
      const single = await desiredDeltaSince(db, request.nodeId, request.fromRevision);
      expect(batched[i]?.delta, `${request.nodeId} from ${request.fromRevision}`).toEqual(single);
      if (single) deltas++;
    }
    expect(deltas).toBeGreaterThan(100);
    const node = nodes[0];
    expect(batched[0]).toMatchObject({
      nodeId: node?.id,
      nodeWireId: node?.wireId,
      organizationWireId: node?.organization.wireId,
    });
    const unknown = await desiredDeltasSince(db, [
      { nodeId: "0190d2a4-0000-7000-8000-000000000000", fromRevision: 0 },
    ]);
    expect(unknown).toEqual([]);
    await expect(desiredDeltasSince(db, [{ nodeId: "x", fromRevision: 0 }])).rejects.toThrow(
      DesiredStateError,
    );
  }, 180_000);
});
