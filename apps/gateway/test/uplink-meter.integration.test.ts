import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Db } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { rolloutStrategySchema } from "@edgefleet/rollout";
import { actOnRollout, insertRollout } from "@edgefleet/rollout-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.js";
import { SiteUplinkMeter } from "../src/sites/uplink-meter.js";

// The meter behind the rollout page's budget use (issue 11, #4), on real Postgres: it measures
// only rollouts with a budget that this replica leases, per site of their nodes, from the hub's
// /leafz counters (here a stand-in whose counters the test moves: the real hub is read in
// site-cache.integration.test.ts), and a replica that lost the lease cannot overwrite a newer row.

let database: TestDatabase;
let db: Db;
let leafz: Server;
let monitorUrl: string;
/** What the stand-in /leafz answers: the hub's clock and each leaf connection's counters. */
const hub = { now: 1_000_000, leafs: [] as Array<{ id: number; name: string; out_bytes: number }> };
let organizationId: string;
const sites: Record<string, string> = {};

async function rollout(name: string, strategy: unknown, leaseOwner: string | null): Promise<string> {
  const app = await db.app.create({ data: { organizationId, name } });
  const version = await db.appVersion.create({
    data: {
      organizationId,
      appId: app.id,
      version: "1.0.0",
      artifactSource: "upload",
      artifactState: "ready",
      artifactSha256: "e".repeat(64),
      artifactSize: 10n,
      runSpec: { command: ["./x"] },
    },
  });
  const system = { type: "system" as const, id: "uplink-meter-test" };
  const id = await db.$transaction((tx) =>
    insertRollout(tx, {
      organizationId,
      appId: app.id,
      appVersionId: version.id,
      selector: "fleet=meter",
      siteIds: [],
      strategy: rolloutStrategySchema.parse(strategy),
      versionLabel: "1.0.0",
      actor: system,
    }),
  );
  const started = await db.$transaction((tx) =>
    actOnRollout(tx, organizationId, id, { type: "start" }, system),
  );
  expect(started.ok, JSON.stringify(started)).toBe(true);
  await db.rollout.update({
    where: { id },
    data: { leaseOwner, leaseUntil: leaseOwner ? new Date(Date.now() + 600_000) : null },
  });
  return id;
}

const meter = (replicaId: string) =>
  new SiteUplinkMeter(db, { monitorUrl, intervalMs: 2_000, replicaId }, createLogger("silent"));
const rowsOf = (rolloutId: string) =>
  db.rolloutSiteUplink.findMany({ where: { rolloutId }, orderBy: { leafName: "asc" } });

beforeAll(async () => {
  database = await createMigratedDatabase();
  db = database.db;
  organizationId = (await db.organization.create({ data: { slug: "meter", name: "Meter" } })).id;
  for (const name of ["north", "south"]) {
    const site = await db.site.create({ data: { organizationId, name } });
    sites[name] = site.id;
    await db.node.createMany({
      data: [0, 1].map((i) => ({
        organizationId,
        name: `${name}-${i}`,
        labels: { fleet: "meter" },
        siteId: site.id,
        status: "online" as const,
      })),
    });
  }
  leafz = createServer((req, res) => {
    if (req.url !== "/leafz") {
      res.writeHead(404).end();
      return;
    }
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ now: new Date(hub.now).toISOString(), leafs: hub.leafs }));
  });
  leafz.listen(0, "127.0.0.1");
  await once(leafz, "listening");
  monitorUrl = `http://127.0.0.1:${(leafz.address() as AddressInfo).port}`;
});

afterAll(async () => {
  leafz?.close();
  await database?.drop();
});

describe("SiteUplinkMeter", () => {
  it("measures each site of a budgeted rollout it leases, from the link's connections, by the hub's clock", async () => {
    const id = await rollout(
      "budgeted",
      { batches: [{ percent: 100 }], siteBandwidth: { bytesPerSecond: 1_000 } },
      "a",
    );
    hub.leafs = [
      { id: 1, name: "meter-north", out_bytes: 10_000 },
      { id: 2, name: "meter-north", out_bytes: 500 },
    ];
    expect(await meter("a").tick()).toBe(2);
    expect((await rowsOf(id)).map((r) => [r.leafName, r.linked, r.bytes, r.rateBps])).toEqual([
      ["meter-north", true, 0, null],
      ["meter-south", false, 0, null],
    ]);
    // Two seconds later by the hub's clock: 4,000 bytes more down north's two connections.
    hub.now += 2_000;
    hub.leafs = [
      { id: 1, name: "meter-north", out_bytes: 13_000 },
      { id: 2, name: "meter-north", out_bytes: 1_500 },
    ];
    expect(await meter("a").tick()).toBe(2);
    const [north, south] = await rowsOf(id);
    expect(north).toMatchObject({ bytes: 4_000, rateBps: 2_000, peakBps: 2_000, readings: 2, linked: true });
    expect(north?.history).toEqual([[hub.now, 4_000, 2_000]]);
    expect(north?.readAt?.getTime()).toBe(hub.now);
    expect(south).toMatchObject({ bytes: 0, rateBps: 0, linked: false });
    // A reading too soon after the last (a quick tick) writes nothing.
    hub.now += 100;
    expect(await meter("a").tick()).toBe(0);
  });

  it("leaves rollouts without a budget, and those another replica leases, alone", async () => {
    const plain = await rollout("plain", { batches: [{ percent: 100 }] }, "b");
    const others = await rollout(
      "others",
      { batches: [{ percent: 100 }], siteBandwidth: { concurrentDownloads: 1 } },
      "someone-else",
    );
    hub.now += 2_000;
    await meter("b").tick();
    expect(await rowsOf(plain)).toEqual([]);
    expect(await rowsOf(others)).toEqual([]);
    // The lease holder measures it (a concurrent-downloads budget counts too).
    await meter("someone-else").tick();
    expect((await rowsOf(others)).length).toBe(2);
  });

  it("continues from the stored counters after a handover; a reading older than the stored one changes nothing", async () => {
    const id = await rollout(
      "handover",
      { batches: [{ percent: 100 }], siteBandwidth: { bytesPerSecond: 1_000 } },
      "old",
    );
    hub.now += 2_000;
    hub.leafs = [{ id: 9, name: "meter-south", out_bytes: 1_000 }];
    await meter("old").tick();
    // The lease moves; the new holder's first reading continues the old one's counters.
    await db.rollout.update({ where: { id }, data: { leaseOwner: "new" } });
    hub.now += 2_000;
    hub.leafs = [{ id: 9, name: "meter-south", out_bytes: 7_000 }];
    await meter("new").tick();
    const south = (await rowsOf(id)).find((r) => r.siteId === sites.south);
    expect(south).toMatchObject({ bytes: 6_000, rateBps: 3_000, readings: 2 });
    // The old replica, with a reading older than the row's, changes nothing (even holding the lease).
    await db.rollout.update({ where: { id }, data: { leaseOwner: "old" } });
    hub.now -= 1_000;
    await meter("old").tick();
    expect((await rowsOf(id)).find((r) => r.siteId === sites.south)).toMatchObject({
      bytes: 6_000,
      readings: 2,
    });
  });
});
