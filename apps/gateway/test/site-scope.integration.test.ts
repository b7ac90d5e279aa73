import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseCreds } from "@edgefleet/agent-sdk";
import {
  createEnrollCurve,
  decodeMessage,
  encodeMessage,
  openEnrollReply,
  PROTOCOL_VERSION,
  signEnrollProof,
  siteToken,
} from "@edgefleet/agent-sdk/protocol";
import { createEnrollmentToken, type Db } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import {
  freePort,
  type RunningNats,
  sleep,
  startNats,
  startOperatorModeHub,
  waitFor,
} from "@edgefleet/nats-tenancy/testing";
import { jetstream } from "@nats-io/jetstream";
import { createUser, type KeyPair } from "@nats-io/nkeys";
import { connect, credsAuthenticator, jwtAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess } from "./support/gateway-process.js";
import { organizationLeafLinks } from "./support/leaf-links.js";
import { requireTestEnv } from "./support/required-env.js";

// Issue 8 #2 and #12 against the real gateway, a real operator-mode hub and real leaves. The
// attacks use only what an attacker has: a site's leaf bundle (its leaf machine's operator), a
// node's own credentials, and what any node can know of another's subjects (its wire id and site,
// never a secret). Subjects are read from each node's credentials as issued, so the same attacks
// ran against the code before site-scoped subjects, where they succeeded.

const gatewayDir = join(import.meta.dirname, "..");
const workDir = mkdtempSync(join(tmpdir(), "ef-site-scope-"));
let secrets: TenancySecrets;
let hub: RunningNats & { leafUrl: string };
const leaves: RunningNats[] = [];
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let platform: NatsConnection;
let organizationId: string;
const opened: NatsConnection[] = [];

interface Enrolled {
  nid: string;
  jwt: string;
  key: KeyPair;
  /** The node's uplink prefix (its JWT's `ef.up.….>` permission, without `.>`). */
  up: string;
  /** Its downlink (its JWT's `ef.down.…` permission) and inbox prefix (`_INBOX.…`, without `.>`). */
  down: string;
  inbox: string;
}

/** What a node's credentials allow, read from its JWT (as any NATS client could). */
function permissions(jwt: string): { pub: string[]; sub: string[] } {
  const claims = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString()) as {
    nats: { pub: { allow: string[] }; sub: { allow: string[] } };
  };
  return { pub: claims.nats.pub.allow, sub: claims.nats.sub.allow };
}

async function enroll(siteId: string, name: string): Promise<Enrolled> {
  const { token } = await createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(Date.now() + 600_000),
    maxUses: 1,
    siteId,
  });
  const key = createUser();
  const client = await connect({
    servers: hub.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(secrets.enroll.userCreds)),
  });
  const curve = createEnrollCurve();
  const raw = await client.request(
    "ef.enroll",
    encodeMessage("enrollRequest", {
      v: PROTOCOL_VERSION,
      tok: token,
      key: key.getPublicKey(),
      name,
      av: "0.1.0",
      os: "linux",
      arch: "x64",
      xk: curve.getPublicKey(),
      sig: signEnrollProof(key, token, curve.getPublicKey()),
    }),
    { timeout: 5_000 },
  );
  await client.close();
  const wire = decodeMessage("enrollReply", raw.data);
  const reply = wire.ok ? openEnrollReply(wire.msg, curve) : wire;
  if (!reply.ok || reply.msg.st !== "approved" || !reply.msg.jwt || !reply.msg.nid)
    throw new Error(`enrollment failed: ${JSON.stringify(reply)}`);
  const { pub, sub } = permissions(reply.msg.jwt);
  const up = pub.find((subject) => subject.startsWith("ef.up."))?.replace(/\.>$/, "") ?? "";
  const down = sub.find((subject) => subject.startsWith("ef.down.")) ?? "";
  const inbox = sub.find((subject) => subject.startsWith("_INBOX."))?.replace(/\.>$/, "") ?? "";
  return { nid: reply.msg.nid, jwt: reply.msg.jwt, key, up, down, inbox };
}

async function connectNode(node: Enrolled, url: string): Promise<NatsConnection> {
  const nc = await connect({
    servers: url,
    authenticator: jwtAuthenticator(node.jwt, node.key.getSeed()),
    inboxPrefix: node.inbox,
  });
  opened.push(nc);
  return nc;
}

const hello = () =>
  encodeMessage("hello", { v: 1, av: "0.1.0", os: "linux", arch: "x64", boot: "b", rev: 0 });
const status = (seq: number) => encodeMessage("statusReport", { v: 1, seq, at: Date.now(), inst: [] });

/** Writes a site's leaf bundle with the site-leaf CLI, as an operator does. */
function bundle(site: string, agentPort: number): string {
  const out = join(workDir, `bundle-${site}`);
  const generated = spawnSync(
    process.execPath,
    [
      join(gatewayDir, "node_modules/tsx/dist/cli.mjs"),
      "src/cli/site-leaf.ts",
      ...["--org", "scope", "--site", site, "--hub", hub.leafUrl],
      ...["--listen", `127.0.0.1:${agentPort}`, "--out", out, "--no-cache"],
    ],
    { cwd: gatewayDir, env: { PATH: process.env.PATH ?? "", ...env() }, encoding: "utf8" },
  );
  expect(generated.status, generated.stderr).toBe(0);
  return out;
}

let gatewayEnv: Record<string, string>;
const env = () => gatewayEnv;

let siteA: { id: string; agentUrl: string; bundle: string };
let siteB: { id: string };

beforeAll(async () => {
  secrets = await createTenancySecrets("site-scope");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  organizationId = (await db.organization.create({ data: { slug: "scope", name: "Scope" } })).id;
  const a = await db.site.create({ data: { organizationId, name: "plant-a" } });
  const b = await db.site.create({ data: { organizationId, name: "plant-b" } });
  const file = (name: string, content: string) => {
    writeFileSync(join(workDir, name), content);
    return join(workDir, name);
  };
  gatewayEnv = {
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
  };
  gateway = await GatewayProcess.start({
    ...gatewayEnv,
    GATEWAY_HEALTH_INTERVAL_MS: "500",
    GATEWAY_HEARTBEAT_INTERVAL_S: "1",
    GATEWAY_LIVENESS_FLUSH_MS: "200",
  });
  await gateway.waitForReadyz(200);
  platform = await connect({
    servers: hub.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(secrets.platform.userCreds)),
  });
  opened.push(platform);
  // Site A's leaf, from its bundle; site B's nodes reach the hub directly here.
  const agentPort = await freePort();
  const out = bundle("plant-a", agentPort);
  leaves.push(
    await startNats(
      ({ monitorPort }) =>
        `${readFileSync(join(out, "leaf.conf"), "utf8")}\nhttp: 127.0.0.1:${monitorPort}\n`,
    ),
  );
  await waitFor("site A's leaf linked", async () =>
    (await organizationLeafLinks(hub.monitorUrl, secrets)) > 0 ? true : undefined,
  );
  siteA = { id: a.id, agentUrl: `nats://127.0.0.1:${agentPort}`, bundle: out };
  siteB = { id: b.id };
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(opened.map((nc) => nc.close()));
  await gateway?.kill();
  for (const leaf of leaves) await leaf.stop();
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

describe("a site's leaf credentials (issue 8 #2)", () => {
  it("carry only their own site's node subjects and their own site cache's", async () => {
    const { jwt } = parseCreds(readFileSync(join(siteA.bundle, "site.creds"), "utf8"));
    const { wireId } = await db.site.findUniqueOrThrow({ where: { id: siteA.id } });
    const site = siteToken(wireId);
    // Up: its nodes' reports and its leaf's answers to the gateway's cache seeder. Down: its
    // nodes' downlinks and inboxes, and the seeder's calls to its own leaf's JetStream domain.
    expect(permissions(jwt)).toEqual({
      pub: [`ef.up.${site}.>`, `_INBOX.efsc.${siteA.id}.>`],
      sub: [`ef.down.${site}.>`, `_INBOX.${site}.>`, `$JS.efsite-${siteA.id}.API.>`, `ef.sc.${siteA.id}.>`],
    });
  });

  it("cannot publish as a node of another site of the same organization", async () => {
    const own = await enroll(siteA.id, "a-1");
    const victim = await enroll(siteB.id, "b-1");
    // The operator of site A runs a leaf of their own with A's credentials, checking nothing.
    const hostile = await startNats(({ dir, port, monitorPort }) => {
      const creds = join(dir, "site.creds");
      writeFileSync(creds, readFileSync(join(siteA.bundle, "site.creds"), "utf8"));
      return [
        `listen: 127.0.0.1:${port}`,
        `http: 127.0.0.1:${monitorPort}`,
        `leafnodes { remotes: [{ urls: ${JSON.stringify([hub.leafUrl])}, credentials: ${JSON.stringify(creds)} }] }`,
      ].join("\n");
    });
    leaves.push(hostile);
    const local = await connect({ servers: hostile.url });
    opened.push(local);
    const js = jetstream(local, { domain: "hub" });
    // What it may do: speak for its own site's node (its local authority; proves the link works).
    await waitFor(
      "its own site's report stored",
      async () => {
        await js.publish(`${own.up}.st`, status(1), { timeout: 1_000 }).catch(() => undefined);
        const row = await db.node.findUniqueOrThrow({ where: { id: own.nid } });
        return row.statusSeq === 1n ? true : undefined;
      },
      30_000,
    );
    // What it must not: speak for another site's node, on every subject the victim could use.
    for (let seq = 1; seq <= 3; seq++) {
      local.publish(`${victim.up}.hello`, hello());
      local.publish(`${victim.up}.hb`, encodeMessage("heartbeat", { v: 1, s: seq }));
      await js.publish(`${victim.up}.st`, status(10 + seq), { timeout: 1_000 }).catch(() => undefined);
    }
    await local.flush();
    await sleep(2_000);
    expect(await db.node.findUniqueOrThrow({ where: { id: victim.nid } })).toMatchObject({
      status: "offline",
      statusSeq: 0n,
      lastSeenAt: null,
    });
  });
});

describe("a node (issue 8 #12)", () => {
  it("cannot get a reply delivered to another node's downlink", async () => {
    const attacker = await enroll(siteA.id, "a-2");
    const victim = await enroll(siteB.id, "b-2");
    const victimConnection = await connectNode(victim, hub.url);
    const delivered: string[] = [];
    victimConnection.subscribe(victim.down, { callback: (_error, msg) => void delivered.push(msg.subject) });
    await victimConnection.flush();
    const attackerConnection = await connectNode(attacker, siteA.agentUrl);
    // Its own Hello is answered on its own inbox (the link works).
    await waitFor("the attacker's own Hello answered", () =>
      attackerConnection.request(`${attacker.up}.hello`, hello(), { timeout: 1_000 }).catch(() => undefined),
    );
    // Every name of the victim's downlink it can know: up to its wire id (and site), never a
    // secret. The gateway answers each Hello on the reply subject NATS made for it.
    const wid = victim.up.split(".").at(-1) ?? "";
    const known = victim.down.slice(0, victim.down.indexOf(`.${wid}`) + wid.length + 1);
    for (const reply of [known, `ef.down.${wid}`, `${known}.x`]) {
      attackerConnection.publish(`${attacker.up}.hello`, hello(), { reply });
      attackerConnection.publish(
        `${attacker.up}.art`,
        encodeMessage("artifactChunkRequest", {
          v: 1,
          obj: "0".repeat(64),
          off: 0,
          len: 1,
        }),
        { reply },
      );
    }
    await attackerConnection.flush();
    await sleep(2_000);
    expect(delivered).toEqual([]);
  });
});
