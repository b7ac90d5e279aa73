import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Agent,
  HollowRuntime,
  MemoryOutbox,
  MemoryStateStore,
  SyntheticHostSampler,
} from "@edgefleet/agent-sdk";
import {
  createEnrollCurve,
  decodeMessage,
  encodeMessage,
  nodeAddressFromJwt,
  nodeInboxPrefix,
  openEnrollReply,
  PROTOCOL_VERSION,
  signEnrollProof,
} from "@edgefleet/agent-sdk/protocol";
import { LinkCutter } from "@edgefleet/agent-sdk/testing";
import { createEnrollmentToken, type Db, revokeNode } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import {
  freePort,
  type RunningNats,
  startNats,
  startOperatorModeHub,
  waitFor,
} from "@edgefleet/nats-tenancy/testing";
import { createUser, type KeyPair } from "@nats-io/nkeys";
import { connect, credsAuthenticator, jwtAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";

// Issue 8 #13: a site's leaf enforces revocations itself (a revoked node connected only to the
// leaf is cut off by the leaf within seconds), and a node behind a leaf enrolls through it with
// no route to the hub. The leaf runs from the bundle the site-leaf CLI writes.

const gatewayDir = join(import.meta.dirname, "..");
const workDir = mkdtempSync(join(tmpdir(), "ef-leaf-revocation-"));
const bundleDir = join(workDir, "bundle");
let secrets: TenancySecrets;
let hub: RunningNats & { leafUrl: string };
let leaf: RunningNats;
let leafAgentUrl: string;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let organizationId: string;
let siteId: string;
const opened: NatsConnection[] = [];
/** Short, so the test is quick; the heartbeat bound stays the default's (30 s: offline after 105 s). */
const DISCONNECT_GRACE_MS = 3_000;

const leafLinks = async () =>
  ((await (await fetch(`${hub.monitorUrl}/leafz`)).json()) as { leafnodes: number }).leafnodes;

beforeAll(async () => {
  secrets = await createTenancySecrets("leaf-revocation-test");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  const organization = await db.organization.create({ data: { slug: "leafy", name: "Leafy" } });
  organizationId = organization.id;
  // Nodes enroll at the site whose leaf they reach the hub through (their subjects name it).
  siteId = (await db.site.create({ data: { organizationId, name: "plant-9" } })).id;
  const file = (name: string, content: string) => {
    writeFileSync(join(workDir, name), content);
    return join(workDir, name);
  };
  const env = {
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
  };
  gateway = await GatewayProcess.start({
    ...env,
    GATEWAY_HEALTH_INTERVAL_MS: "500",
    // No re-send within the test: a restarted leaf catches up through the hub's leaf link check.
    GATEWAY_LEAF_ACCOUNT_RESEND_MS: "3600000",
    GATEWAY_LEAF_LINK_CHECK_MS: "500",
    GATEWAY_DISCONNECT_GRACE_MS: String(DISCONNECT_GRACE_MS),
  });
  await waitFor("enrollment service", async () =>
    gateway.logLines().some((line) => line.service === "enrollment") ? true : undefined,
  );

  const agentPort = await freePort();
  leafAgentUrl = `nats://127.0.0.1:${agentPort}`;
  const cli = spawnSync(
    process.execPath,
    [
      join(gatewayDir, "node_modules/tsx/dist/cli.mjs"),
      "src/cli/site-leaf.ts",
      ...["--org", "leafy", "--site", "plant-9", "--hub", hub.leafUrl],
      ...["--listen", `127.0.0.1:${agentPort}`, "--out", bundleDir],
    ],
    { cwd: gatewayDir, env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8" },
  );
  if (cli.status !== 0) throw new Error(`site-leaf failed: ${cli.stderr}`);
  leaf = await startLeaf();
}, 120_000);

const startLeaf = () =>
  startNats(
    ({ monitorPort }) =>
      `${readFileSync(join(bundleDir, "leaf.conf"), "utf8")}\nhttp: 127.0.0.1:${monitorPort}\n`,
  );
let revoked: { wid: string; jwt: string; key: KeyPair } | undefined;

/** Resolves to "connected" or the error of a node's one attempt to connect to the leaf. */
const tryConnect = (node: { jwt: string; key: KeyPair }) =>
  connect({
    servers: leafAgentUrl,
    authenticator: jwtAuthenticator(node.jwt, node.key.getSeed()),
    reconnect: false,
    timeout: 3_000,
  }).then(
    async (nc) => {
      await nc.close();
      return "connected";
    },
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );

afterAll(async () => {
  await Promise.allSettled(opened.map((nc) => nc.close()));
  await gateway?.kill();
  await leaf?.stop();
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

/** Enrolls a node through the leaf: the request never goes to the hub's client port. */
async function enrollThroughLeaf(
  name: string,
): Promise<{ wid: string; jwt: string; key: KeyPair; nid: string }> {
  const { token } = await createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(Date.now() + 60_000),
    maxUses: 1,
    siteId,
  });
  const key = createUser();
  const enrollClient = await connect({
    servers: leafAgentUrl,
    authenticator: credsAuthenticator(
      new TextEncoder().encode(readFileSync(join(bundleDir, "enroll.creds"), "utf8")),
    ),
  });
  opened.push(enrollClient);
  const curve = createEnrollCurve();
  const request = encodeMessage("enrollRequest", {
    v: PROTOCOL_VERSION,
    tok: token,
    key: key.getPublicKey(),
    name,
    av: "0.1.0",
    os: "linux",
    arch: "x64",
    xk: curve.getPublicKey(),
    sig: signEnrollProof(key, token, curve.getPublicKey()),
  });
  // The leaf's link to the hub's enroll account comes up asynchronously: ask until answered.
  const raw = await waitFor(
    "an enrollment answered through the leaf",
    () => enrollClient.request("ef.enroll", request, { timeout: 2_000 }).catch(() => undefined),
    20_000,
  );
  await enrollClient.close();
  const wire = decodeMessage("enrollReply", raw.data);
  const reply = wire.ok ? openEnrollReply(wire.msg, curve) : wire;
  if (!reply.ok || reply.msg.st !== "approved" || !reply.msg.jwt || !reply.msg.wid || !reply.msg.nid)
    throw new Error(`enrollment through the leaf failed: ${JSON.stringify(reply)}`);
  return { wid: reply.msg.wid, jwt: reply.msg.jwt, key, nid: reply.msg.nid };
}

describe("a site leaf linked to the hub's system and enroll accounts (issue 8 #13)", () => {
  it("links the organization, its account updates and enrollment to the hub", async () => {
    await waitFor("three leaf links", async () => ((await leafLinks()) === 3 ? true : undefined), 20_000);
    for (const name of ["site.creds", "site-system.creds"])
      expect(statSync(join(bundleDir, name)).mode & 0o777).toBe(0o600);
    // The system link hears only this organization's account updates and publishes nothing.
    const creds = readFileSync(join(bundleDir, "site-system.creds"), "utf8");
    const jwt = /-----BEGIN NATS USER JWT-----\n(.+)\n/.exec(creds)?.[1] ?? "";
    const claims = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString()) as {
      nats: { pub: { allow?: string[]; deny?: string[] }; sub: { allow?: string[] }; issuer_account: string };
    };
    const account = (await db.organization.findUniqueOrThrow({ where: { id: organizationId } }))
      .natsAccountKey;
    expect(claims.nats.issuer_account).toBe(secrets.system.publicKey);
    // It publishes only its own organization's DISCONNECT events (nodes go offline within seconds).
    expect(claims.nats.pub.allow).toEqual([`$SYS.ACCOUNT.${account}.DISCONNECT`]);
    expect(claims.nats.pub.deny ?? []).toEqual([]);
    expect(claims.nats.sub.allow).toEqual([`$SYS.REQ.ACCOUNT.${account}.CLAIMS.UPDATE`]);
  });

  it("enrolls a node through the leaf and cuts it off at the leaf within seconds of its revocation", async () => {
    const node = await enrollThroughLeaf("edge-behind-leaf");
    const agent = await connect({
      servers: leafAgentUrl,
      authenticator: jwtAuthenticator(node.jwt, node.key.getSeed()),
      inboxPrefix: nodeInboxPrefix(nodeAddressFromJwt(node.jwt) ?? { wid: node.wid, site: null, down: null }),
      reconnect: false,
    });
    opened.push(agent);
    const closed = agent.closed();
    // Connected to the leaf only: the hub has never seen this node's connection.
    const hubConnz = (await (await fetch(`${hub.monitorUrl}/connz?subs=0&auth=1`)).json()) as {
      connections?: Array<{ authorized_user?: string }>;
    };
    expect((hubConnz.connections ?? []).some((c) => c.authorized_user === node.key.getPublicKey())).toBe(
      false,
    );

    const revokedAt = Date.now();
    expect(await revokeNode(db, organizationId, node.nid)).toBe(true);
    const outcome = await Promise.race([
      closed.then(() => "closed by the leaf"),
      new Promise<string>((resolve) => setTimeout(() => resolve("still connected after 10 s"), 10_000)),
    ]);
    expect(outcome).toBe("closed by the leaf");
    expect(Date.now() - revokedAt).toBeLessThan(10_000);

    // And it cannot come back through the leaf.
    expect(await tryConnect(node)).toMatch(/authorization|revoked/i);
    revoked = node;
  });

  it("a leaf restarted from its bundle (which predates the revocation) refuses the node within seconds", async () => {
    if (!revoked) throw new Error("needs the revoked node of the previous test");
    const node = revoked;
    await leaf.stop();
    leaf = await startLeaf();
    await waitFor(
      "three leaf links again",
      async () => ((await leafLinks()) === 3 ? true : undefined),
      20_000,
    );
    // The gateway sees the leaf link again (it checks every 500 ms here) and pushes the current JWT.
    const refused = await waitFor(
      "the restarted leaf refusing the revoked node",
      async () => {
        const outcome = await tryConnect(node);
        return outcome === "connected" ? undefined : outcome;
      },
      10_000,
      200,
    );
    expect(refused).toMatch(/authorization|revoked/i);
  });
});

describe("a node behind the leaf goes offline when its connection closes (the leaf's DISCONNECT event)", () => {
  const statusOf = async (nid: string) =>
    (await db.node.findUniqueOrThrow({ where: { id: nid }, select: { status: true } })).status;
  const reasons = async (nid: string) =>
    (await db.nodeStatusEvent.findMany({ where: { nodeId: nid }, orderBy: { id: "asc" } })).map(
      (event) => `${event.toStatus}:${event.reason}`,
    );

  it("is offline within seconds of its link dropping, long before the heartbeat bound, and online again after", async () => {
    const node = await enrollThroughLeaf("edge-on-a-cut-link");
    const link = await LinkCutter.start(Number(new URL(leafAgentUrl).port));
    const agent = await Agent.start({
      servers: [`nats://127.0.0.1:${link.port}`],
      credentials: { jwt: node.jwt, seed: new TextDecoder().decode(node.key.getSeed()) },
      runtime: new HollowRuntime({ fetchArtifacts: false }),
      outbox: new MemoryOutbox(),
      stateStore: new MemoryStateStore(),
      hostSampler: new SyntheticHostSampler(),
      reconnect: { baseMs: 200, maxMs: 500 },
    });
    try {
      await waitFor(
        "online",
        async () => ((await statusOf(node.nid)) === "online" ? true : undefined),
        20_000,
      );

      // A blip shorter than the grace: the agent reconnects and says Hello again; it stays online.
      link.cut();
      link.restore();
      await new Promise((resolve) => setTimeout(resolve, DISCONNECT_GRACE_MS + 3_000));
      expect(await statusOf(node.nid)).toBe("online");
      expect(await reasons(node.nid)).not.toContain("offline:disconnected");

      // The link stays down: the leaf closes the connection and says so; the gateway hears it over
      // the site's system link and marks the node offline after the grace (heartbeats: 105 s).
      const cutAt = Date.now();
      link.cut();
      await waitFor(
        "offline by the disconnect event",
        async () => ((await statusOf(node.nid)) === "offline" ? true : undefined),
        DISCONNECT_GRACE_MS + 10_000,
        200,
      );
      expect(Date.now() - cutAt).toBeLessThan(DISCONNECT_GRACE_MS + 10_000);
      expect((await reasons(node.nid)).at(-1)).toBe("offline:disconnected");

      link.restore();
      await waitFor(
        "online again",
        async () => ((await statusOf(node.nid)) === "online" ? true : undefined),
        20_000,
      );
      expect((await reasons(node.nid)).at(-1)).toBe("online:hello");
    } finally {
      await agent.stop();
      await link.close();
    }
  }, 90_000);
});
