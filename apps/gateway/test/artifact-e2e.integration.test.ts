import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { artifactBucket, efArtifactUrl, formatWireId, type RunSpec } from "@edgefleet/agent-sdk/protocol";
import { createEnrollmentToken, type Db, setDesiredApps } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import { type RunningNats, startOperatorModeHub, waitFor } from "@edgefleet/nats-tenancy/testing";
import { jetstream } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { create as createTar } from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess, metricValue } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";
import { testAgent } from "./support/test-agent.js";

// Version switches end to end, every part real: the reference agent CLI (process runtime) gets a
// desired app whose artifact is a tarball in its organization's object store bucket, fetches it
// in chunks through the gateway over its own NATS subjects, verifies, unpacks and runs it; a
// version with a wrong hash is refused while the old one keeps running; a version failing its
// health check is reverted on the node.

// The reference agent or the native one: the vitest project picks (support/test-agent.ts).
const agentUnderTest = testAgent();
const workDir = mkdtempSync(join(tmpdir(), "ef-artifact-e2e-"));

let secrets: TenancySecrets;
let hub: RunningNats;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let platform: NatsConnection;
let agent: ChildProcess;
let agentLog = "";
let organizationId: string;
let orgWireId: string;
let nodeId: string;

const file = (name: string, content: string) => {
  writeFileSync(join(workDir, name), content);
  return join(workDir, name);
};

beforeAll(async () => {
  secrets = await createTenancySecrets("artifact-e2e");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  const organization = await db.organization.create({ data: { slug: "art-e2e", name: "Artifacts E2E" } });
  organizationId = organization.id;
  orgWireId = formatWireId(organization.wireId);
  gateway = await GatewayProcess.start({
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
    GATEWAY_ARTIFACT_CACHE_DIR: join(workDir, "gateway-cache"),
    GATEWAY_HEALTH_INTERVAL_MS: "500",
    GATEWAY_HEARTBEAT_INTERVAL_S: "1",
    GATEWAY_LIVENESS_FLUSH_MS: "200",
    GATEWAY_DESIRED_RESCAN_MS: "1000",
  });
  await gateway.waitForReadyz(200);
  // The upload path's side of the contract: the platform account's object store, domain hub.
  platform = await connect({
    servers: hub.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(secrets.platform.userCreds)),
  });

  const { token } = await createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(Date.now() + 600_000),
    maxUses: 1,
  });
  const config = file(
    "agent.yaml",
    [
      `stateDir: ${join(workDir, "agent-state")}`,
      // A single-node site: the agent connects to the hub itself.
      `servers: ["${hub.url}"]`,
      "enroll:",
      `  credsFile: ${file("enroll.creds", secrets.enroll.userCreds)}`,
      `  token: ${token}`,
      "  name: artifact-node",
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
});

afterAll(async () => {
  if (agent && agent.exitCode === null) {
    const exited = new Promise((resolve) => agent.once("exit", resolve));
    agent.kill("SIGTERM");
    await exited;
  }
  await platform?.close();
  await gateway?.kill();
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

/** A .tar.gz with `run.js`: records its pid, creates `ready` if it is to pass its health check. */
async function tarball(version: string, healthy: boolean): Promise<Uint8Array> {
  const src = join(workDir, `src-${version}`);
  mkdirSync(src, { recursive: true });
  writeFileSync(
    join(src, "run.js"),
    `const fs = require("fs");
     fs.writeFileSync(${JSON.stringify(join(workDir, `pid-${version}`))}, String(process.pid));
     ${healthy ? 'fs.writeFileSync("ready", "");' : ""}
     setInterval(() => {}, 1000);`,
  );
  const archive = join(workDir, `app-${version}.tar.gz`);
  await createTar({ gzip: true, file: archive, cwd: src }, ["run.js"]);
  return readFileSync(archive);
}

async function upload(bytes: Uint8Array): Promise<string> {
  const sha = createHash("sha256").update(bytes).digest("hex");
  const store = await new Objm(jetstream(platform, { domain: "hub" })).create(artifactBucket(orgWireId));
  await store.putBlob({ name: sha }, bytes);
  return sha;
}

const runSpec: RunSpec = {
  command: [process.execPath, "run.js"],
  health: { exec: ["test", "-f", "ready"], intervalSeconds: 1, timeoutSeconds: 1, failureThreshold: 2 },
  revertOnFailure: true,
};

async function appVersion(version: string, artifactUrl: string, artifactSha256: string) {
  const app = await db.app.upsert({
    where: { organizationId_name: { organizationId, name: "reader" } },
    create: { organizationId, name: "reader" },
    update: {},
  });
  return db.appVersion.create({
    data: { organizationId, appId: app.id, version, artifactUrl, artifactSha256, runSpec },
  });
}

const instance = () => db.appInstance.findFirstOrThrow({ where: { nodeId } });
const pidOf = (version: string) => Number(readFileSync(join(workDir, `pid-${version}`), "utf8"));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("version switches through the gateway", () => {
  it("runs an uploaded tarball, refuses a wrong hash keeping the old version, reverts a version failing its health check", async () => {
    // 1.0.0: uploaded, fetched through the gateway, verified, unpacked, running.
    const v1Bytes = await tarball("1.0.0", true);
    const v1Sha = await upload(v1Bytes);
    const v1 = await appVersion("1.0.0", efArtifactUrl(v1Sha), v1Sha);
    await setDesiredApps(db, organizationId, nodeId, { put: [v1.id] });
    await waitFor(`1.0.0 running (agent log: ${agentLog.slice(-2000)})`, async () => {
      const row = await instance();
      return row.state === "running" && row.observedVersionId === v1.id ? row : undefined;
    });
    const pid1 = pidOf("1.0.0");
    expect(alive(pid1)).toBe(true);
    const metrics = (await gateway.get("/metrics")).text;
    expect(
      metricValue(metrics, `edgefleet_gateway_artifact_bytes_served_total{org="${organizationId}"}`),
    ).toBe(v1Bytes.byteLength);

    // 2.0.0 states a hash its artifact does not have: refused, 1.0.0 keeps running.
    const v2Sha = await upload(await tarball("2.0.0", true));
    const wrong = createHash("sha256").update("not the artifact").digest("hex");
    const v2 = await appVersion("2.0.0", efArtifactUrl(v2Sha), wrong);
    await setDesiredApps(db, organizationId, nodeId, { put: [v2.id] });
    const refused = await waitFor("2.0.0 refused", async () => {
      const row = await instance();
      return row.state === "failed" ? row : undefined;
    });
    expect(refused.observedVersionId).toBe(v1.id);
    expect(refused.reason).toBe(
      `artifact SHA-256 mismatch: expected ${wrong}, got ${v2Sha}; still running 1.0.0`,
    );
    expect(alive(pid1)).toBe(true);

    // 3.0.0 never passes its health check: failed within its start window, reverted to 1.0.0.
    const v3Sha = await upload(await tarball("3.0.0", false));
    const v3 = await appVersion("3.0.0", efArtifactUrl(v3Sha), v3Sha);
    await setDesiredApps(db, organizationId, nodeId, { put: [v3.id] });
    const reverted = await waitFor("3.0.0 reverted", async () => {
      const row = await instance();
      return row.state === "failed" && row.reason?.includes("reverted to 1.0.0") ? row : undefined;
    });
    expect(reverted.observedVersionId).toBe(v1.id);
    expect(reverted.reason).toMatch(/^3\.0\.0 failed within its 3 s start window: /);
    const pid1Again = await waitFor("1.0.0 running again", () => {
      const pid = pidOf("1.0.0");
      return pid !== pid1 && alive(pid) ? pid : undefined;
    });
    expect(alive(pidOf("3.0.0"))).toBe(false);
    expect(alive(pid1Again)).toBe(true);
  }, 90_000);
});
