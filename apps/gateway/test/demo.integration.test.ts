import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Db, DEMO_ORGANIZATIONS, demoArtifact, demoNodes, seedDemoData } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import { type RunningNats, startNats, startOperatorModeHub, waitFor } from "@edgefleet/nats-tenancy/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";

// The demo of `./edgefleet up` (dev profile), the way the stack script runs it: the live seed, the
// demo CLI (artifacts, site leaf bundles, node keys), one real leaf nats-server per site, every
// seeded node a hollow agent on its site's leaf, and the demo rollouts driven by the real
// controller. Then all of it again, as `down` + `up` does: nothing is made twice.

const gatewayDir = join(import.meta.dirname, "..");
const workDir = mkdtempSync(join(tmpdir(), "ef-demo-"));
const demoDir = join(workDir, "demo");
const internalToken = "demo-test-internal-token-0123456789abcdef";
let secrets: TenancySecrets;
let hub: RunningNats & { leafUrl: string };
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let env: Record<string, string>;
let leafPortBase: number;
let running: { leaves: RunningNats[]; fleet: ChildProcess | null } = { leaves: [], fleet: null };
const agentCli = join(gatewayDir, "../../packages/agent-sdk/bin/edgefleet-agent.mjs");

const seededNodes = DEMO_ORGANIZATIONS.flatMap((demo) =>
  demoNodes(demo).map((node) => ({ ...node, org: demo.slug })),
);

beforeAll(async () => {
  secrets = await createTenancySecrets("demo-test");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  const file = (name: string, content: string) => {
    writeFileSync(join(workDir, name), content);
    return join(workDir, name);
  };
  env = {
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    NATS_LEAF_URL: hub.leafUrl,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
    GATEWAY_INTERNAL_TOKEN: internalToken,
    GATEWAY_ROLLOUT_TICK_MS: "250",
  };
  // The public enrollment credentials, as the stack's NATS_ENROLL_CREDS (for the hollow agents).
  file("enroll.creds", secrets.enroll.userCreds);
  gateway = await GatewayProcess.start(env);
  await gateway.waitForReadyz(200);
  leafPortBase = await freePortRange(5);
});

afterAll(async () => {
  await stopDemo();
  await gateway?.kill();
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

/**
 * Consecutive free ports for the leaves (the CLI numbers them from a base, as the stack's
 * 4230..4234). Below the kernel's ephemeral range, where freePort() and other tests' servers
 * pick theirs, and clear of every stack profile's ports (11xxx is used by none).
 */
async function freePortRange(count: number): Promise<number> {
  const isFree = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
  for (;;) {
    const base = 11_000 + Math.floor(Math.random() * 900);
    const free = await Promise.all(Array.from({ length: count }, (_, i) => isFree(base + i)));
    if (free.every(Boolean)) return base;
  }
}

function demoCli(args: string[]) {
  const result = spawnSync(
    process.execPath,
    [join(gatewayDir, "node_modules/tsx/dist/cli.mjs"), "src/cli/demo.ts", ...args],
    {
      cwd: gatewayDir,
      env: { PATH: process.env.PATH ?? "", ...env, GATEWAY_HTTP_PORT: new URL(gateway.baseUrl).port },
      encoding: "utf8",
    },
  );
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return result.stdout.trim().split("\n");
}

/** What `up` does after the gateway is up: seed (live), prepare, run leaves and agents, rollouts. */
async function upDemo() {
  await seedDemoData(db, { liveFleet: true });
  const prepared = demoCli(["prepare", "--live", "--dir", demoDir, "--leaf-port-base", String(leafPortBase)]);
  const leaves = prepared.filter((line) => line.startsWith("leaf "));
  for (const line of leaves) {
    const configPath = line.split(" ")[2] ?? "";
    running.leaves.push(
      await startNats(
        ({ monitorPort }) => `${readFileSync(configPath, "utf8")}\nhttp: 127.0.0.1:${monitorPort}\n`,
      ),
    );
  }
  const fleetFile = JSON.parse(readFileSync(join(demoDir, "fleet.json"), "utf8")) as {
    nodes: Array<{ name: string; token: string; seed: string; url: string }>;
  };
  // The hollow fleet exactly as the stack script starts it.
  running.fleet = spawn(
    process.execPath,
    [
      agentCli,
      "hollow",
      "--nodes",
      join(demoDir, "fleet.json"),
      "--enroll-url",
      hub.url,
      "--enroll-creds",
      join(workDir, "enroll.creds"),
      "--fetch-artifacts",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const agentLog: string[] = [];
  running.fleet.stderr?.setEncoding("utf8").on("data", (chunk: string) => agentLog.push(chunk));
  // The controller finishes one rollout and stops the other for approval as the agents report.
  const settled = await (async () => {
    try {
      return await waitFor(
        "the demo rollouts to settle",
        async () => {
          const rows = await db.rollout.findMany({ include: { app: true }, orderBy: { createdAt: "asc" } });
          const statuses = rows.map((row) => `${row.app.name} ${row.status}`);
          return statuses.join() === "telemetry-collector completed,route-optimizer awaiting_approval"
            ? statuses
            : undefined;
        },
        90_000,
      );
    } catch (error) {
      throw new Error(
        `${String(error)}\nthe hollow agents' log ends with:\n${agentLog.join("").slice(-2_000)}`,
      );
    }
  })();
  return { prepared, leaves, fleetFile, settled };
}

async function stopDemo() {
  const fleet = running.fleet;
  if (fleet && fleet.exitCode === null && fleet.signalCode === null) {
    const exited = once(fleet, "exit");
    fleet.kill("SIGTERM");
    await exited;
  }
  await Promise.allSettled(running.leaves.map((leaf) => leaf.stop()));
  running = { leaves: [], fleet: null };
}

async function instancesOf(org: string, app: string) {
  return db.appInstance.findMany({
    where: { organization: { slug: org }, app: { name: app } },
    include: { node: true, observedVersion: true, desiredVersion: true },
  });
}

describe("the live demo of ./edgefleet up", () => {
  it("runs every seeded node live on its site's leaf, with real artifacts and two controller-driven rollouts", async () => {
    const { prepared, leaves, fleetFile } = await upDemo();
    expect(prepared[0]).toBe("artifacts 5 ready (5 uploaded now)");
    expect(leaves).toHaveLength(5);
    expect(fleetFile.nodes).toHaveLength(seededNodes.length);
    expect(prepared.filter((line) => line.startsWith("rollout "))).toEqual([
      "rollout acme telemetry-collector@1.5.0 started (finishes once its agents report)",
      "rollout globex route-optimizer@1.0.0 started (waits for approval after its first batch once its agents report)",
    ]);

    // Every seeded node online, on its site, connected to that site's leaf (not the hub).
    await waitFor("every demo node online", async () =>
      (await db.node.count({ where: { status: { not: "online" } } })) === 0 ? true : undefined,
    );
    const nodes = await db.node.findMany({ include: { site: true, organization: true } });
    expect(nodes).toHaveLength(seededNodes.length);
    for (const seeded of seededNodes) {
      const node = nodes.find((n) => n.name === seeded.name);
      expect(node, seeded.name).toMatchObject({ status: "online", site: { name: seeded.site } });
    }
    // Agents only: a leaf has connections of its own (its system account's).
    const clientsPerLeaf = await Promise.all(
      running.leaves.map(async (leaf) => {
        const connz = (await (await fetch(`${leaf.monitorUrl}/connz?limit=1000`)).json()) as {
          connections: Array<{ name?: string }>;
        };
        return connz.connections.filter((c) => c.name?.startsWith("edgefleet-hollow")).length;
      }),
    );
    expect(clientsPerLeaf).toEqual(
      DEMO_ORGANIZATIONS.flatMap((demo) => demo.sites.map((site) => site.nodeCount)),
    );

    // The versions' artifacts are the demo bytes, ready, and really in each organization's store.
    const versions = await db.appVersion.findMany({ include: { app: true, organization: true } });
    expect(versions).toHaveLength(5);
    for (const version of versions) {
      const artifact = demoArtifact(version.organization.slug, version.app.name, version.version);
      expect(version).toMatchObject({ artifactState: "ready", artifactSha256: artifact.sha256 });
      expect(Number(version.artifactSize)).toBe(artifact.bytes.length);
      const stored = await fetch(
        `${gateway.baseUrl}/internal/orgs/${version.organizationId}/artifacts/${artifact.sha256}`,
        { headers: { authorization: `Bearer ${internalToken}` } },
      );
      expect(stored.status).toBe(200);
    }

    // Finished: every Acme node runs telemetry-collector 1.5.0, reported by its agent.
    const telemetry = await instancesOf("acme", "telemetry-collector");
    expect(telemetry).toHaveLength(24);
    for (const instance of telemetry) {
      expect(instance, instance.node.name).toMatchObject({
        state: "running",
        observedVersion: { version: "1.5.0" },
      });
    }
    // Paused for approval: Rotterdam moved to 1.0.0, Hamburg's non-canaries still run 0.9.0.
    const routes = await instancesOf("globex", "route-optimizer");
    for (const instance of routes) {
      const labels = instance.node.labels as Record<string, string>;
      const expected = labels.site === "hub-rotterdam" || labels.tier === "canary" ? "1.0.0" : "0.9.0";
      expect(instance, instance.node.name).toMatchObject({
        state: "running",
        observedVersion: { version: expected },
      });
    }
    const paused = await db.rollout.findFirstOrThrow({ where: { app: { name: "route-optimizer" } } });
    expect(paused).toMatchObject({ status: "awaiting_approval", createdBy: "demo" });
  }, 180_000);

  it("comes back the same after down + up: same keys, no new rollouts, artifacts kept", async () => {
    const before = await db.node.findMany({
      select: { name: true, publicKey: true },
      orderBy: { name: "asc" },
    });
    const rolloutsBefore = await db.rollout.findMany({
      select: { id: true, status: true },
      orderBy: { id: "asc" },
    });
    const tokensBefore = await db.enrollmentToken.count();
    await stopDemo();

    const { prepared } = await upDemo();
    expect(prepared[0]).toBe("artifacts 5 ready (0 uploaded now)");
    expect(prepared.filter((line) => line.startsWith("rollout "))).toEqual([
      "rollout acme telemetry-collector@1.5.0 completed",
      "rollout globex route-optimizer@1.0.0 awaiting_approval",
    ]);
    expect(
      await db.node.findMany({ select: { name: true, publicKey: true }, orderBy: { name: "asc" } }),
    ).toEqual(before);
    expect(await db.rollout.findMany({ select: { id: true, status: true }, orderBy: { id: "asc" } })).toEqual(
      rolloutsBefore,
    );
    expect(await db.enrollmentToken.count()).toBe(tokensBefore);
    await waitFor("every demo node online again", async () =>
      (await db.node.count({ where: { status: { not: "online" } } })) === 0 ? true : undefined,
    );
    // Re-seeding did not undo the finished rollout.
    for (const instance of await instancesOf("acme", "telemetry-collector")) {
      expect(instance.desiredVersion.version, instance.node.name).toBe("1.5.0");
    }
  }, 180_000);
});
