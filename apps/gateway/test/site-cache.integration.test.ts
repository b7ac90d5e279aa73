import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type HollowFleet, startHollowFleet } from "@edgefleet/agent-sdk";
import {
  artifactBucket,
  efArtifactUrl,
  formatWireId,
  nodeAddressFromJwt,
  nodeInboxPrefix,
  SITE_CACHE_DIRECT_GET_SUBJECT,
  SITE_CACHE_STREAM,
} from "@edgefleet/agent-sdk/protocol";
import { createEnrollmentToken, type Db, setDesiredApps } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import {
  freePort,
  type RunningNats,
  startNats,
  startOperatorModeHub,
  waitFor,
} from "@edgefleet/nats-tenancy/testing";
import { rolloutStrategySchema } from "@edgefleet/rollout";
import { actOnRollout, insertRollout } from "@edgefleet/rollout-store";
import { jetstream } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ArtifactCache } from "../src/edge/artifacts/artifact-cache.js";
import { watchLeafLink } from "../src/sites/leaf-links.js";
import { SiteCacheSeeder } from "../src/sites/site-cache-seeder.js";
import { GatewayProcess } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";

// The site artifact cache on real leaf nodes (issue 11, #5): a site whose leaf runs JetStream is
// seeded once over its uplink and its nodes (hollow agents, the real protocol and fetcher) read
// the artifact from the leaf; a leaf without JetStream is a stated fallback to the hub. The
// uplink is measured where it is: the hub's /leafz byte counters of the site's leaf connection.

const NODES_PER_SITE = 5;
const ARTIFACT_BYTES = 3 * 1024 * 1024 + 12_345;

const gatewayDir = join(import.meta.dirname, "..");
const workDir = mkdtempSync(join(tmpdir(), "ef-site-cache-"));
let secrets: TenancySecrets;
let hub: RunningNats & { leafUrl: string };
const leaves: RunningNats[] = [];
const fleets: HollowFleet[] = [];
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let platform: NatsConnection;
let env: Record<string, string>;
let organizationId: string;
let orgWireId: string;
let accountPublicKey: string;
let seeder: SiteCacheSeeder;

interface Site {
  id: string;
  name: string;
  agentUrl: string;
  fleet: HollowFleet;
  nodeIds: string[];
}
let cached: Site;
let uncached: Site;

const file = (name: string, content: string) => {
  writeFileSync(join(workDir, name), content);
  return join(workDir, name);
};

const siteLeaf = (args: string[]) =>
  spawnSync(
    process.execPath,
    [join(gatewayDir, "node_modules/tsx/dist/cli.mjs"), "src/cli/site-leaf.ts", ...args],
    { cwd: gatewayDir, env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8" },
  );

interface Leafz {
  leafnodes: number;
  leafs: Array<{ name: string; account: string; in_bytes: number; out_bytes: number }>;
}
const leafz = async () => (await (await fetch(`${hub.monitorUrl}/leafz`)).json()) as Leafz;
/** Bytes the hub sent down this site's leaf connection so far (the uplink's artifact direction). */
// A site leaf has up to three links (its organization, the system account's updates, enrollment:
// issue 8 #13); all of them cross the site's uplink, so the uplink is their sum.
const downBytes = async (site: Site) => {
  const links = (await leafz()).leafs.filter((l) => l.name === `cachy-${site.name}`);
  if (links.length === 0) throw new Error(`no leaf connection for ${site.name}`);
  return links.reduce((sum, link) => sum + link.out_bytes, 0);
};
/** The leaf's link bound to the organization's account (the one its nodes' traffic takes) is up. */
const organizationLinkUp = async (name: string) =>
  (await leafz()).leafs.some(
    (l) =>
      l.name === `cachy-${name}` &&
      l.account !== secrets.system.publicKey &&
      l.account !== secrets.enroll.publicKey,
  );

async function startSite(name: string, bundleArgs: string[]): Promise<Site> {
  const row = await db.site.create({ data: { organizationId, name } });
  const agentPort = await freePort();
  const out = join(workDir, `bundle-${name}`);
  const result = siteLeaf([
    ...["--org", "cachy", "--site", name, "--hub", hub.leafUrl],
    ...["--listen", `127.0.0.1:${agentPort}`, "--out", out, ...bundleArgs],
  ]);
  expect(result.status, result.stderr).toBe(0);
  leaves.push(
    await startNats(
      ({ monitorPort }) =>
        `${readFileSync(join(out, "leaf.conf"), "utf8")}\nhttp: 127.0.0.1:${monitorPort}\n`,
    ),
  );
  await waitFor(`leaf ${name} linked`, async () => ((await organizationLinkUp(name)) ? true : undefined));
  const { token } = await createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(Date.now() + 600_000),
    maxUses: NODES_PER_SITE,
    siteId: row.id,
  });
  const fleet = await startHollowFleet({
    count: NODES_PER_SITE,
    token,
    servers: [`nats://127.0.0.1:${agentPort}`],
    enrollServers: [hub.url],
    enrollCreds: secrets.enroll.userCreds,
    namePrefix: name,
    fetchArtifacts: true,
    reconnect: { baseMs: 100, maxMs: 1_000 },
  });
  fleets.push(fleet);
  const nodeIds = await waitFor(`${name}'s nodes online`, async () => {
    const nodes = await db.node.findMany({ where: { siteId: row.id, status: "online" } });
    return nodes.length === NODES_PER_SITE ? nodes.map((n) => n.id) : undefined;
  });
  return { id: row.id, name, agentUrl: `nats://127.0.0.1:${agentPort}`, fleet, nodeIds };
}

async function uploadArtifact(): Promise<{ sha: string; bytes: Uint8Array }> {
  const bytes = randomBytes(ARTIFACT_BYTES);
  const sha = createHash("sha256").update(bytes).digest("hex");
  const store = await new Objm(jetstream(platform, { domain: "hub" })).create(artifactBucket(orgWireId));
  await store.putBlob({ name: sha }, bytes);
  return { sha, bytes };
}

async function versionOf(version: string, sha: string) {
  const app = await db.app.upsert({
    where: { organizationId_name: { organizationId, name: "cached-app" } },
    create: { organizationId, name: "cached-app" },
    update: {},
  });
  return db.appVersion.create({
    data: {
      organizationId,
      appId: app.id,
      version,
      artifactUrl: efArtifactUrl(sha),
      artifactSha256: sha,
      runSpec: { command: ["./artifact"] },
    },
  });
}

async function rollTo(site: Site, versionId: string) {
  for (const nodeId of site.nodeIds) await setDesiredApps(db, organizationId, nodeId, { put: [versionId] });
  await waitFor(
    `${site.name}'s nodes running the new version`,
    async () => {
      const running = await db.appInstance.count({
        where: { nodeId: { in: site.nodeIds }, observedVersionId: versionId, state: "running" },
      });
      return running === site.nodeIds.length ? true : undefined;
    },
    60_000,
  );
}

const chunkCounters = (site: Site) =>
  site.fleet.agents.reduce(
    (sum, agent) => ({
      siteCache: sum.siteCache + agent.chunkCounters.siteCache,
      fallback: sum.fallback + agent.chunkCounters.fallback,
    }),
    { siteCache: 0, fallback: 0 },
  );

beforeAll(async () => {
  secrets = await createTenancySecrets("site-cache-test");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  const organization = await db.organization.create({ data: { slug: "cachy", name: "Cachy" } });
  organizationId = organization.id;
  orgWireId = formatWireId(organization.wireId);
  env = {
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
  };
  gateway = await GatewayProcess.start({
    ...env,
    GATEWAY_ARTIFACT_CACHE_DIR: join(workDir, "gateway-cache"),
    GATEWAY_HEALTH_INTERVAL_MS: "500",
    GATEWAY_HEARTBEAT_INTERVAL_S: "1",
    GATEWAY_LIVENESS_FLUSH_MS: "200",
    GATEWAY_DESIRED_RESCAN_MS: "1000",
    GATEWAY_ROLLOUT_TICK_MS: "250",
    NATS_MONITOR_URL: hub.monitorUrl,
  });
  await gateway.waitForReadyz(200);
  platform = await connect({
    servers: hub.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(secrets.platform.userCreds)),
  });
  cached = await startSite("plant-c", ["--cache-dir", join(workDir, "leaf-c-js")]);
  uncached = await startSite("plant-n", ["--no-cache"]);
  accountPublicKey = (await db.organization.findUniqueOrThrow({ where: { id: organizationId } }))
    .natsAccountKey as string;
  seeder = new SiteCacheSeeder(
    secrets,
    new ArtifactCache(
      { dir: join(workDir, "seeder-cache"), maxBytes: 64 * 1024 * 1024 },
      () => new Objm(jetstream(platform, { domain: "hub" })),
    ),
    { natsUrl: hub.url },
  );
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(fleets.map((fleet) => fleet.stop()));
  await platform?.close();
  await gateway?.kill();
  await Promise.allSettled(leaves.map((leaf) => leaf.stop()));
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

describe("site artifact cache on a real leaf", () => {
  it(`serves ${NODES_PER_SITE} nodes with one uplink transfer`, async () => {
    const { sha } = await uploadArtifact();
    const version = await versionOf("1.0.0", sha);
    const before = await downBytes(cached);
    const outcome = await seeder.seed({
      siteId: cached.id,
      accountPublicKey,
      bucket: artifactBucket(orgWireId),
      obj: sha,
    });
    expect(outcome.status, JSON.stringify(outcome)).toBe("seeded");
    expect(outcome).toMatchObject({ bytes: ARTIFACT_BYTES });
    const afterSeed = await downBytes(cached);
    await rollTo(cached, version.id);
    const after = await downBytes(cached);
    // The whole site pulled the artifact over its uplink once: ≈ 1× its size, not 5×.
    expect(afterSeed - before).toBeGreaterThanOrEqual(ARTIFACT_BYTES);
    expect(after - before).toBeLessThan(ARTIFACT_BYTES * 1.1);
    const counters = chunkCounters(cached);
    expect(counters.fallback).toBe(0);
    expect(counters.siteCache).toBe(NODES_PER_SITE * Math.ceil(ARTIFACT_BYTES / (128 * 1024)));
    // Seeding again finds it there (and only touches its marker).
    expect(
      await seeder.seed({ siteId: cached.id, accountPublicKey, bucket: artifactBucket(orgWireId), obj: sha }),
    ).toEqual({ status: "present", bytes: ARTIFACT_BYTES });
  }, 120_000);

  it("a leaf without JetStream is a stated fallback: its nodes fetch from the hub, N transfers", async () => {
    const { sha } = await uploadArtifact();
    const version = await versionOf("2.0.0", sha);
    const outcome = await seeder.seed({
      siteId: uncached.id,
      accountPublicKey,
      bucket: artifactBucket(orgWireId),
      obj: sha,
    });
    expect(outcome.status).toBe("no_cache");
    expect("reason" in outcome && outcome.reason).toMatch(/runs no JetStream/);
    const before = await downBytes(uncached);
    await rollTo(uncached, version.id);
    const after = await downBytes(uncached);
    expect(after - before).toBeGreaterThanOrEqual(NODES_PER_SITE * ARTIFACT_BYTES);
    const counters = chunkCounters(uncached);
    expect(counters.siteCache).toBe(0);
    expect(counters.fallback).toBeGreaterThanOrEqual(
      NODES_PER_SITE * Math.ceil(ARTIFACT_BYTES / (128 * 1024)),
    );
  }, 120_000);

  it("a rollout seeds the site's cache before its first dispatch, paced to the site's budget, and says which site fell back", async () => {
    const { sha } = await uploadArtifact();
    const version = await versionOf("3.0.0", sha);
    const budget = 2_000_000;
    const beforeCached = await downBytes(cached);
    const beforeUncached = await downBytes(uncached);
    const system = { type: "system" as const, id: "site-cache-test" };
    const rolloutId = await db.$transaction((tx) =>
      insertRollout(tx, {
        organizationId,
        appId: version.appId,
        appVersionId: version.id,
        selector: "",
        siteIds: [],
        strategy: rolloutStrategySchema.parse({
          batches: [{ percent: 100 }],
          siteBandwidth: { bytesPerSecond: budget },
        }),
        versionLabel: "3.0.0",
        actor: system,
      }),
    );
    // The site without a cache pulls from the hub: the gateway paces its chunks to the budget.
    const uncachedLink = watchLeafLink(hub.monitorUrl, `cachy-${uncached.name}`);
    const started = await db.$transaction((tx) =>
      actOnRollout(tx, organizationId, rolloutId, { type: "start" }, system),
    );
    expect(started.ok, JSON.stringify(started)).toBe(true);
    await waitFor(
      "rollout completed",
      async () =>
        (await db.rollout.findUniqueOrThrow({ where: { id: rolloutId } })).status === "completed"
          ? true
          : undefined,
      90_000,
    );
    const events = await db.rolloutEvent.findMany({
      where: { rolloutId: rolloutId },
      orderBy: { id: "asc" },
    });
    const siteEvents = events.filter((e) => e.kind === "site_cache");
    const bySite = (id: string) =>
      siteEvents.find((e) => (e.data as { siteId: string }).siteId === id)?.data as {
        status: string;
        reason: string | null;
        uplink: { bytes: number; peakBytesPerSecond: number } | null;
        budgetBytesPerSecond: number;
      };
    // Seeded before the first dispatch: the ready event precedes every dispatch event.
    const readyAt = events.findIndex((e) => e.kind === "site_cache_ready");
    const firstDispatch = events.findIndex((e) => e.kind === "dispatched" || e.kind === "batch_started");
    expect(readyAt).toBeGreaterThanOrEqual(0);
    expect(readyAt).toBeLessThan(firstDispatch);
    const seeded = bySite(cached.id);
    expect(seeded.status).toBe("seeded");
    expect(seeded.budgetBytesPerSecond).toBe(budget);
    expect(seeded.uplink?.bytes).toBeGreaterThanOrEqual(ARTIFACT_BYTES);
    // The budget held, measured on the hub's leaf connection: peak ≤ budget + 10 %.
    expect(seeded.uplink?.peakBytesPerSecond).toBeLessThanOrEqual(budget * 1.1);
    expect(seeded.uplink?.peakBytesPerSecond).toBeGreaterThan(budget * 0.5);
    const fellBack = bySite(uncached.id);
    expect(fellBack.status).toBe("no_cache");
    expect(siteEvents.find((e) => (e.data as { siteId: string }).siteId === uncached.id)?.message).toMatch(
      /no site cache .*its nodes fetch from the hub/,
    );
    const fallbackUse = await uncachedLink.stop();
    expect(fallbackUse?.bytes).toBeGreaterThanOrEqual(NODES_PER_SITE * ARTIFACT_BYTES);
    expect(fallbackUse?.peakBytesPerSecond).toBeLessThanOrEqual(budget * 1.1);
    // The rollout page's budget use (rollout_site_uplink), measured by the gateway's meter on the
    // same /leafz while the rollout moved: the fallback site's link held the budget and carried
    // the nodes' artifacts; the cached site's carried at most the one seed transfer.
    const uplinks = await db.rolloutSiteUplink.findMany({ where: { rolloutId } });
    const uplinkOf = (site: Site) => uplinks.find((u) => u.siteId === site.id);
    expect(uplinkOf(uncached)).toMatchObject({ leafName: `cachy-${uncached.name}`, linked: true });
    expect(uplinkOf(uncached)?.bytes).toBeGreaterThanOrEqual(2 * ARTIFACT_BYTES);
    expect(uplinkOf(uncached)?.peakBps).toBeLessThanOrEqual(budget * 1.1);
    expect(uplinkOf(uncached)?.peakBps).toBeGreaterThan(budget * 0.5);
    expect(uplinkOf(cached)?.bytes).toBeLessThan(ARTIFACT_BYTES * 1.1);
    // One transfer to the cached site for all its nodes; N to the other.
    expect((await downBytes(cached)) - beforeCached).toBeLessThan(ARTIFACT_BYTES * 1.1);
    expect((await downBytes(uncached)) - beforeUncached).toBeGreaterThanOrEqual(
      NODES_PER_SITE * ARTIFACT_BYTES,
    );
  }, 150_000);

  it("a node may only read its cache: no other JetStream call, no writing to it", async () => {
    const identity = cached.fleet.identities[0];
    if (!identity) throw new Error("no node");
    const { nativeJwtAuthenticator } = await import("@edgefleet/agent-sdk");
    const errors: string[] = [];
    const node = await connect({
      servers: cached.agentUrl,
      authenticator: nativeJwtAuthenticator(identity.jwt, identity.seed),
      inboxPrefix: nodeInboxPrefix(
        nodeAddressFromJwt(identity.jwt) ?? { wid: identity.wid, site: null, down: null },
      ),
    });
    (async () => {
      for await (const status of node.status())
        if (status.type === "error") errors.push(String(status.error));
    })();
    try {
      node.publish(`$JS.API.STREAM.PURGE.${SITE_CACHE_STREAM}`, new Uint8Array());
      node.publish("efc.x.0", new Uint8Array([1]));
      await node.flush();
      await waitFor("permission violations reported", async () => (errors.length >= 2 ? true : undefined));
      expect(errors.join("\n")).toMatch(/Permissions Violation for Publish to "\$JS\.API\.STREAM\.PURGE/);
      // Reading is allowed: a direct get of a chunk that is not there answers 404, not a violation.
      const reply = await node.request(
        SITE_CACHE_DIRECT_GET_SUBJECT,
        JSON.stringify({ last_by_subj: "efc.missing.0" }),
      );
      expect(reply.headers?.code).toBe(404);
    } finally {
      await node.close();
    }
  });
});
