import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { enroll, nativeCredsAuthenticator } from "@edgefleet/agent-sdk";
import { formatWireId, nodeAddressFromJwt, siteToken } from "@edgefleet/agent-sdk/protocol";
import { createEnrollmentToken, type Db, moveNodeToSite, setDesiredApps } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, formatCreds, type TenancySecrets } from "@edgefleet/nats-tenancy";
import {
  layout1NodeUserJwt,
  type RunningNats,
  startOperatorModeHub,
  waitFor,
} from "@edgefleet/nats-tenancy/testing";
import { createUser } from "@nats-io/nkeys";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess, metricValue } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";
import { testAgent } from "./support/test-agent.js";

// How a real agent (each of them: vitest.config.ts runs this file per agent) gets new credentials
// over the channel it has (docs/protocol.md "Credentials"): a node enrolled before site-scoped
// subjects migrates at its first Hello, and a node moved to another site is sent credentials for
// it on its downlink; both store them (node.creds) and go on working on the new subjects. The
// agent connects to the hub directly, so that it reaches the hub from either site.

const agentUnderTest = testAgent();
const workDir = mkdtempSync(join(tmpdir(), "ef-credentials-e2e-"));
let secrets: TenancySecrets;
let hub: RunningNats;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let agent: ChildProcess | undefined;
let agentLog = "";
let organizationId: string;
let sites: Array<{ id: string; token: string }>;
let nodeId: string;
const stateDir = join(workDir, "agent-state");

const file = (name: string, content: string) => {
  writeFileSync(join(workDir, name), content, { mode: 0o600 });
  return join(workDir, name);
};

/** The JWT in the agent's node.creds now. */
const storedJwt = () =>
  /-----BEGIN NATS USER JWT-----\s*\n\s*(\S+)/.exec(
    readFileSync(join(stateDir, "node.creds"), "utf8"),
  )?.[1] ?? "";

async function runningVersion(appId: string, version: string): Promise<true | undefined> {
  const instance = await db.appInstance.findFirst({
    where: { nodeId, appId },
    include: { observedVersion: true },
  });
  return instance?.state === "running" && instance.observedVersion?.version === version ? true : undefined;
}

beforeAll(async () => {
  secrets = await createTenancySecrets("credentials");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  const organization = await db.organization.create({ data: { slug: "creds", name: "Credentials" } });
  organizationId = organization.id;
  sites = [];
  for (const name of ["plant-a", "plant-b"]) {
    const site = await db.site.create({ data: { organizationId, name } });
    sites.push({ id: site.id, token: siteToken(site.wireId) });
  }
  gateway = await GatewayProcess.start({
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
    GATEWAY_HEALTH_INTERVAL_MS: "500",
    GATEWAY_HEARTBEAT_INTERVAL_S: "1",
    GATEWAY_LIVENESS_FLUSH_MS: "200",
    GATEWAY_DESIRED_RESCAN_MS: "1000",
  });
  await gateway.waitForReadyz(200);

  // A node enrolled before site scoping, at site A: its state dir holds layout-1 credentials
  // (what the gateway minted then), and its row no subject site.
  const key = createUser();
  const node = await db.node.create({
    data: {
      organizationId,
      name: "old-node",
      siteId: sites[0]?.id ?? null,
      publicKey: key.getPublicKey(),
      status: "offline",
    },
  });
  nodeId = node.id;
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const organizationKey = await ensureAccount();
  const jwt = await layout1NodeUserJwt(secrets, {
    nodeId: node.id,
    wid: formatWireId(node.wireId),
    publicKey: key.getPublicKey(),
    accountPublicKey: organizationKey,
  });
  writeFileSync(join(stateDir, "node.creds"), formatCreds(jwt, key), { mode: 0o600 });
  writeFileSync(
    join(stateDir, "node.json"),
    `${JSON.stringify({ nid: node.id, wid: formatWireId(node.wireId), org: formatWireId(organization.wireId) })}\n`,
  );
  const config = file(
    "agent.yaml",
    [`stateDir: ${stateDir}`, `servers: ["${hub.url}"]`, "reconnect: { baseMs: 100, maxMs: 1000 }"].join(
      "\n",
    ),
  );
  agent = spawn(agentUnderTest.command, [...agentUnderTest.args, "run", "--config", config], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  agent.stdout?.on("data", (chunk) => (agentLog += chunk));
  agent.stderr?.on("data", (chunk) => (agentLog += chunk));
}, 120_000);

/**
 * The organization's NATS account, created and pushed to the hub as at its first enrollment: by
 * enrolling another key through the real gateway, with the real enrollment client.
 */
async function ensureAccount(): Promise<string> {
  const { token } = await createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(Date.now() + 60_000),
    maxUses: 1,
  });
  await enroll({
    token,
    name: "account-maker",
    servers: [hub.url],
    authenticator: nativeCredsAuthenticator(secrets.enroll.userCreds),
    retry: { baseMs: 200, maxMs: 1_000 },
  });
  const row = await db.organization.findUniqueOrThrow({ where: { id: organizationId } });
  if (!row.natsAccountKey) throw new Error("no account after an enrollment");
  return row.natsAccountKey;
}

afterAll(async () => {
  if (agent && agent.exitCode === null) {
    const exited = new Promise((resolve) => agent?.once("exit", resolve));
    agent.kill("SIGTERM");
    await exited;
  }
  await gateway?.kill();
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

describe(`re-issued credentials (${agentUnderTest.kind} agent)`, () => {
  it("migrates a node enrolled before site scoping at its first Hello, and stores the new credentials", async () => {
    const siteA = sites[0]?.token;
    await waitFor(
      `online on site A's subjects (agent log: ${agentLog.slice(-1500)})`,
      async () => {
        const row = await db.node.findUniqueOrThrow({ where: { id: nodeId } });
        return row.status === "online" && row.subjectSite === siteA ? true : undefined;
      },
      30_000,
    );
    expect(nodeAddressFromJwt(storedJwt())).toMatchObject({ site: siteA });
    // Desired state reaches it on its new downlink.
    const app = await db.app.create({ data: { organizationId, name: "sleeper" } });
    const v1 = await db.appVersion.create({
      data: { organizationId, appId: app.id, version: "1", runSpec: { command: ["sleep", "1000"] } },
    });
    await setDesiredApps(db, organizationId, nodeId, { put: [v1.id] });
    await waitFor(`sleeper 1 running (agent log: ${agentLog.slice(-1500)})`, () =>
      runningVersion(app.id, "1"),
    );
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    expect(
      metricValue(metrics, 'edgefleet_gateway_node_credentials_issued_total{via="hello"}'),
    ).toBeGreaterThan(0);
  });

  it("moves to another site: gets credentials for it on its downlink, stores them and works on", async () => {
    const siteB = sites[1] as { id: string; token: string };
    expect(await moveNodeToSite(db, organizationId, nodeId, siteB.id)).toBe(true);
    await waitFor(
      `online on site B's subjects (agent log: ${agentLog.slice(-1500)})`,
      async () => {
        const row = await db.node.findUniqueOrThrow({ where: { id: nodeId } });
        return row.status === "online" && row.subjectSite === siteB.token ? true : undefined;
      },
      30_000,
    );
    expect(nodeAddressFromJwt(storedJwt())).toMatchObject({ site: siteB.token });
    const app = await db.app.findFirstOrThrow({ where: { organizationId, name: "sleeper" } });
    const v2 = await db.appVersion.create({
      data: { organizationId, appId: app.id, version: "2", runSpec: { command: ["sleep", "1001"] } },
    });
    await setDesiredApps(db, organizationId, nodeId, { put: [v2.id] });
    await waitFor(`sleeper 2 running (agent log: ${agentLog.slice(-1500)})`, () =>
      runningVersion(app.id, "2"),
    );
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    expect(
      metricValue(metrics, 'edgefleet_gateway_node_credentials_issued_total{via="push"}'),
    ).toBeGreaterThan(0);
  });
});
