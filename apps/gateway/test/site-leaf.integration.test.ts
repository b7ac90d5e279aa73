import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  agentUpSubject,
  createEnrollCurve,
  decodeMessage,
  encodeMessage,
  nodeAddressFromJwt,
  nodeInboxPrefix,
  openEnrollReply,
  PROTOCOL_VERSION,
  platformUpSubject,
  signEnrollProof,
} from "@edgefleet/agent-sdk/protocol";
import { createEnrollmentToken, type Db, revokeSiteCredentials } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import {
  freePort,
  type RunningNats,
  startNats,
  startOperatorModeHub,
  waitFor,
} from "@edgefleet/nats-tenancy/testing";
import { createUser } from "@nats-io/nkeys";
import { connect, credsAuthenticator, jwtAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess } from "./support/gateway-process.js";
import { organizationLeafLinks } from "./support/leaf-links.js";
import { requireTestEnv } from "./support/required-env.js";

// The operator's path to a site leaf node: generate its bundle with the CLI, run a real leaf
// nats-server from it, and an enrolled agent reaches the platform through that leaf.

const gatewayDir = join(import.meta.dirname, "..");
const workDir = mkdtempSync(join(tmpdir(), "ef-site-leaf-"));
let secrets: TenancySecrets;
let hub: RunningNats & { leafUrl: string };
let leaf: RunningNats | undefined;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let env: Record<string, string>;
const opened: NatsConnection[] = [];

beforeAll(async () => {
  secrets = await createTenancySecrets("site-leaf-test");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  const organization = await db.organization.create({ data: { slug: "leafy", name: "Leafy" } });
  await db.site.create({ data: { organizationId: organization.id, name: "plant-7" } });
  const file = (name: string, content: string) => {
    writeFileSync(join(workDir, name), content);
    return join(workDir, name);
  };
  env = {
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
  };
  gateway = await GatewayProcess.start({ ...env, GATEWAY_HEALTH_INTERVAL_MS: "500" });
  await waitFor("enrollment service", async () =>
    gateway.logLines().some((line) => line.service === "enrollment") ? true : undefined,
  );
});

afterAll(async () => {
  await Promise.allSettled(opened.map((nc) => nc.close()));
  await gateway?.kill();
  await leaf?.stop();
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

const siteLeaf = (args: string[]) =>
  spawnSync(
    process.execPath,
    [join(gatewayDir, "node_modules/tsx/dist/cli.mjs"), "src/cli/site-leaf.ts", ...args],
    {
      cwd: gatewayDir,
      env: { PATH: process.env.PATH ?? "", ...env },
      encoding: "utf8",
    },
  );

describe("site-leaf CLI", () => {
  it("writes a leaf bundle that a real leaf node runs, and agents reach the platform through it", async () => {
    const agentPort = await freePort();
    const out = join(workDir, "bundle");
    const result = siteLeaf([
      "--org",
      "leafy",
      "--site",
      "plant-7",
      "--hub",
      hub.leafUrl,
      "--listen",
      `127.0.0.1:${agentPort}`,
      "--out",
      out,
    ]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(statSync(join(out, "site.creds")).mode & 0o777).toBe(0o600);

    leaf = await startNats(
      ({ monitorPort }) =>
        `${readFileSync(join(out, "leaf.conf"), "utf8")}\nhttp: 127.0.0.1:${monitorPort}\n`,
    );
    await waitFor("leaf connected to the hub", async () => {
      const leafz = (await (await fetch(`${hub.monitorUrl}/leafz`)).json()) as { leafnodes: number };
      return leafz.leafnodes > 0 ? true : undefined;
    });

    // Enroll a node through the gateway, then connect it to the leaf, not the hub.
    const organizationId = (await db.organization.findUniqueOrThrow({ where: { slug: "leafy" } })).id;
    // At the leaf's site: its subjects name the site, and the leaf carries only that site's.
    const site = await db.site.findFirstOrThrow({ where: { organizationId, name: "plant-7" } });
    const { token } = await createEnrollmentToken(db, organizationId, {
      expiresAt: new Date(Date.now() + 60_000),
      maxUses: 1,
      siteId: site.id,
    });
    const key = createUser();
    const enrollClient = await connect({
      servers: hub.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(secrets.enroll.userCreds)),
    });
    opened.push(enrollClient);
    const curve = createEnrollCurve();
    const raw = await enrollClient.request(
      "ef.enroll",
      encodeMessage("enrollRequest", {
        v: PROTOCOL_VERSION,
        tok: token,
        key: key.getPublicKey(),
        name: "edge-1",
        av: "0.1.0",
        os: "linux",
        arch: "x64",
        xk: curve.getPublicKey(),
        sig: signEnrollProof(key, token, curve.getPublicKey()),
      }),
      { timeout: 5_000 },
    );
    const wire = decodeMessage("enrollReply", raw.data);
    const reply = wire.ok ? openEnrollReply(wire.msg, curve) : wire;
    if (!reply.ok || reply.msg.st !== "approved" || !reply.msg.jwt) throw new Error("enrollment failed");
    const { wid, org, jwt } = reply.msg;
    const address = nodeAddressFromJwt(jwt);
    if (!address) throw new Error("the credentials name no node subjects");
    expect(address.site).toBe(`_${site.wireId.toString(36)}`);

    const platform = await connect({
      servers: hub.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(secrets.platform.userCreds)),
    });
    opened.push(platform);
    const heardAtPlatform = new Promise<string>((resolve) => {
      platform.subscribe(platformUpSubject(org ?? "", address, "hb"), {
        callback: (_error, msg) => resolve(msg.subject),
      });
    });
    await platform.flush();
    const agent = await connect({
      servers: `nats://127.0.0.1:${agentPort}`,
      authenticator: jwtAuthenticator(jwt, key.getSeed()),
      inboxPrefix: nodeInboxPrefix(address),
    });
    opened.push(agent);
    // Interest crosses the leaf link asynchronously: keep beating until the platform hears one.
    const beat = setInterval(() => agent.publish(agentUpSubject(address, "hb"), new Uint8Array([1])), 200);
    const timeout = new Promise<string>((resolve) => setTimeout(() => resolve("nothing heard"), 10_000));
    try {
      expect(await Promise.race([heardAtPlatform, timeout])).toBe(`ef.t.${org}.up.${address.site}.${wid}.hb`);
    } finally {
      clearInterval(beat);
    }
  });

  it("re-issuing a bundle or deleting the site cuts the running leaf off; site credentials expire (issue 8, #2)", async () => {
    const leafCount = () => organizationLeafLinks(hub.monitorUrl, secrets);
    const waitForLeaves = (count: number, what: string) =>
      waitFor(what, async () => ((await leafCount()) === count ? true : undefined), 20_000);
    // The first test's leaf runs on the first bundle.
    await waitForLeaves(1, "the first bundle's leaf linked");

    const out = join(workDir, "bundle-2");
    const agentPort = await freePort();
    const result = siteLeaf(
      ["--org", "leafy", "--site", "plant-7", "--hub", hub.leafUrl].concat([
        "--listen",
        `127.0.0.1:${agentPort}`,
        "--out",
        out,
      ]),
    );
    expect(result.status, result.stderr).toBe(0);
    const creds = readFileSync(join(out, "site.creds"), "utf8");
    const jwt = /-----BEGIN NATS USER JWT-----\n(.+)\n/.exec(creds)?.[1] ?? "";
    const claims = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString()) as {
      exp?: number;
    };
    // Expires, in about SITE_CREDENTIALS_DEFAULT_DAYS (90).
    expect(claims.exp).toBeGreaterThan(Date.now() / 1000 + 89 * 86_400);
    expect(claims.exp).toBeLessThan(Date.now() / 1000 + 91 * 86_400);
    // The leaf on the earlier bundle is cut off (its key is revoked in the account JWT).
    await waitForLeaves(0, "the first bundle's leaf cut off");

    const second = await startNats(
      ({ monitorPort }) =>
        `${readFileSync(join(out, "leaf.conf"), "utf8")}\nhttp: 127.0.0.1:${monitorPort}\n`,
    );
    try {
      await waitForLeaves(1, "the second bundle's leaf linked");
      // What deleting the site does (packages/api deleteSite, in its transaction).
      const site = await db.site.findFirstOrThrow({ where: { name: "plant-7" } });
      expect(await revokeSiteCredentials(db, site.organizationId, site.id)).toBe(1);
      await waitForLeaves(0, "the deleted site's leaf cut off");
    } finally {
      await second.stop();
    }
  });

  it("refuses an unknown site with a clear message and writes nothing", () => {
    const out = join(workDir, "nothing");
    const result = siteLeaf(["--org", "leafy", "--site", "nope", "--hub", hub.leafUrl, "--out", out]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('no site "nope" in organization "leafy"');
    expect(() => statSync(out)).toThrow();
  });

  it("prints usage for missing arguments", () => {
    const result = siteLeaf(["--org", "leafy"]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("usage: site-leaf");
  });
});
