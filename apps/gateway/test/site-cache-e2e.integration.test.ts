import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { artifactBucket, efArtifactUrl, formatWireId, type RunSpec } from "@edgefleet/agent-sdk/protocol";
import { createEnrollmentToken, type Db, setDesiredApps } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import { type RunningNats, startNats, startOperatorModeHub, waitFor } from "@edgefleet/nats-tenancy/testing";
import { rolloutStrategySchema } from "@edgefleet/rollout";
import { actOnRollout, insertRollout } from "@edgefleet/rollout-store";
import { jetstream } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { create as createTar } from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess, metricValue } from "./support/gateway-process.js";
import { organizationLeafLinks } from "./support/leaf-links.js";
import { requireTestEnv } from "./support/required-env.js";
import { testAgent } from "./support/test-agent.js";

// The site artifact cache end to end, run once per agent (vitest.config.ts): the site's leaf runs
// from the bundle the console downloads (the gateway's internal API, the same call the console's
// site.leafBundle makes, its cache on by default), a rollout seeds the cache before it dispatches,
// and the agent under test reads the artifact from its leaf: the gateway serves it no byte. A
// version that was never seeded falls back to the hub, per object.

const agentUnderTest = testAgent();
const TOKEN = randomBytes(24).toString("base64url");
const workDir = mkdtempSync(join(tmpdir(), "ef-site-cache-e2e-"));

let secrets: TenancySecrets;
let hub: RunningNats & { leafUrl: string };
let leaf: RunningNats;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let platform: NatsConnection;
let agent: ChildProcess;
let agentLog = "";
let organizationId: string;
let orgWireId: string;
let siteId: string;
let nodeId: string;
let leafConfig = "";

const file = (name: string, content: string) => {
  writeFileSync(join(workDir, name), content);
  return join(workDir, name);
};

/** The console's leaf bundle for the site, written where its config says the files are. */
async function consoleLeafBundle(listenPort: number): Promise<string> {
  const leafDir = join(workDir, `leaf-${randomUUID().slice(0, 8)}`);
  mkdirSync(leafDir, { recursive: true });
  const credentialsPath = join(leafDir, "site.creds");
  const response = await fetch(`${gateway.baseUrl}/internal/sites/${siteId}/leaf-bundle`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
    // The console's defaults but for the paths (this machine is not the site's box).
    body: JSON.stringify({
      organizationId,
      listen: `127.0.0.1:${listenPort}`,
      credentialsPath,
      siteCache: { storeDir: join(leafDir, "site-cache"), maxBytes: 64 * 1024 * 1024 },
    }),
  });
  const bundle = (await response.json()) as {
    config: string;
    creds: string;
    companions: Record<string, string>;
    error?: string;
  };
  expect(response.status, bundle.error).toBe(200);
  writeFileSync(credentialsPath, bundle.creds, { mode: 0o600 });
  for (const [name, content] of Object.entries(bundle.companions))
    writeFileSync(join(dirname(credentialsPath), name), content, { mode: 0o600 });
  return bundle.config;
}

/** A .tar.gz with run.js (pid file, health) and incompressible padding: several chunks on the wire. */
async function tarball(version: string): Promise<Uint8Array> {
  const src = join(workDir, `src-${version}`);
  mkdirSync(src, { recursive: true });
  writeFileSync(
    join(src, "run.js"),
    `require("fs").writeFileSync(${JSON.stringify(join(workDir, `pid-${version}`))}, String(process.pid));
     setInterval(() => {}, 1000);`,
  );
  writeFileSync(join(src, "pad.bin"), randomBytes(300 * 1024));
  const archive = join(workDir, `app-${version}.tar.gz`);
  await createTar({ gzip: true, file: archive, cwd: src }, ["run.js", "pad.bin"]);
  return readFileSync(archive);
}

async function appVersion(version: string): Promise<{ id: string; appId: string; size: number }> {
  const bytes = await tarball(version);
  const sha = createHash("sha256").update(bytes).digest("hex");
  const store = await new Objm(jetstream(platform, { domain: "hub" })).create(artifactBucket(orgWireId));
  await store.putBlob({ name: sha }, bytes);
  const app = await db.app.upsert({
    where: { organizationId_name: { organizationId, name: "cached" } },
    create: { organizationId, name: "cached" },
    update: {},
  });
  const runSpec: RunSpec = { command: [process.execPath, "run.js"] };
  const row = await db.appVersion.create({
    data: {
      organizationId,
      appId: app.id,
      version,
      artifactUrl: efArtifactUrl(sha),
      artifactSha256: sha,
      artifactSize: BigInt(bytes.byteLength),
      artifactSource: "upload",
      artifactState: "ready",
      runSpec,
    },
  });
  return { id: row.id, appId: app.id, size: bytes.byteLength };
}

const running = (versionId: string) =>
  waitFor(
    `version running (agent log: ${agentLog.slice(-1500)})`,
    async () => {
      const instance = await db.appInstance.findFirst({ where: { nodeId } });
      return instance?.state === "running" && instance.observedVersionId === versionId ? true : undefined;
    },
    60_000,
  );

const servedBytes = async () =>
  metricValue(
    (await gateway.get("/metrics")).text,
    `edgefleet_gateway_artifact_bytes_served_total{org="${organizationId}"}`,
  ) ?? 0;

beforeAll(async () => {
  secrets = await createTenancySecrets("site-cache-e2e");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  const organization = await db.organization.create({ data: { slug: "sce2e", name: "Site cache E2E" } });
  organizationId = organization.id;
  orgWireId = formatWireId(organization.wireId);
  siteId = (await db.site.create({ data: { organizationId, name: "plant-c" } })).id;
  gateway = await GatewayProcess.start({
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    NATS_LEAF_URL: hub.leafUrl,
    NATS_MONITOR_URL: hub.monitorUrl,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
    GATEWAY_INTERNAL_TOKEN: TOKEN,
    GATEWAY_ARTIFACT_CACHE_DIR: join(workDir, "gateway-cache"),
    GATEWAY_HEALTH_INTERVAL_MS: "500",
    GATEWAY_HEARTBEAT_INTERVAL_S: "1",
    GATEWAY_LIVENESS_FLUSH_MS: "200",
    GATEWAY_DESIRED_RESCAN_MS: "1000",
    GATEWAY_ROLLOUT_TICK_MS: "250",
  });
  await gateway.waitForReadyz(200);
  platform = await connect({
    servers: hub.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(secrets.platform.userCreds)),
  });

  leaf = await startNats(async ({ port, monitorPort }) => {
    leafConfig = await consoleLeafBundle(port);
    return `${leafConfig}\nhttp: 127.0.0.1:${monitorPort}\n`;
  });
  await waitFor("the site's leaf linked", async () =>
    (await organizationLeafLinks(hub.monitorUrl, secrets)) > 0 ? true : undefined,
  );

  const { token } = await createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(Date.now() + 600_000),
    maxUses: 1,
    siteId,
  });
  const config = file(
    "agent.yaml",
    [
      `stateDir: ${join(workDir, "agent-state")}`,
      `servers: ["${leaf.url}"]`,
      "enroll:",
      `  servers: ["${hub.url}"]`,
      `  credsFile: ${file("enroll.creds", secrets.enroll.userCreds)}`,
      `  token: ${token}`,
      "  name: cached-node",
      "reconnect: { baseMs: 100, maxMs: 1000 }",
    ].join("\n"),
  );
  agent = spawn(agentUnderTest.command, [...agentUnderTest.args, "run", "--config", config], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  agent.stdout?.on("data", (chunk) => (agentLog += chunk));
  agent.stderr?.on("data", (chunk) => (agentLog += chunk));
  nodeId = await waitFor(
    `node online (agent log: ${agentLog.slice(-1500)})`,
    async () => (await db.node.findFirst({ where: { organizationId, status: "online" } }))?.id,
    30_000,
  );
}, 180_000);

afterAll(async () => {
  if (agent && agent.exitCode === null) {
    const exited = new Promise((resolve) => agent.once("exit", resolve));
    agent.kill("SIGTERM");
    await exited;
  }
  await platform?.close();
  await gateway?.kill();
  await leaf?.stop();
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

describe(`the site cache with the ${agentUnderTest.kind} agent, on a leaf from the console's bundle`, () => {
  it("the console's bundle runs the cache: JetStream in the site's own domain, bounded", () => {
    expect(leafConfig).toContain(`domain: "efsite-${siteId}"`);
    expect(leafConfig).toMatch(/max_file_store: \d+/);
  });

  it("a rollout seeds the leaf, and the node reads the version from it: the gateway serves no byte", async () => {
    const version = await appVersion("1.0.0");
    const system = { type: "system" as const, id: "site-cache-e2e" };
    const rolloutId = await db.$transaction((tx) =>
      insertRollout(tx, {
        organizationId,
        appId: version.appId,
        appVersionId: version.id,
        selector: "",
        siteIds: [siteId],
        strategy: rolloutStrategySchema.parse({ batches: [{ percent: 100 }] }),
        versionLabel: "1.0.0",
        actor: system,
      }),
    );
    const started = await db.$transaction((tx) =>
      actOnRollout(tx, organizationId, rolloutId, { type: "start" }, system),
    );
    expect(started.ok, JSON.stringify(started)).toBe(true);
    await running(version.id);
    const seeded = await db.rolloutEvent.findFirst({ where: { rolloutId, kind: "site_cache" } });
    expect(seeded?.data).toMatchObject({ siteId, status: "seeded", artifactBytes: version.size });
    expect(await servedBytes()).toBe(0);
  }, 120_000);

  it("a version that was never seeded comes from the hub, that object only", async () => {
    const version = await appVersion("2.0.0");
    // Straight to the node, no rollout: nothing seeds the leaf.
    await setDesiredApps(db, organizationId, nodeId, { put: [version.id] });
    await running(version.id);
    expect(await servedBytes()).toBe(version.size);
  }, 120_000);
});
