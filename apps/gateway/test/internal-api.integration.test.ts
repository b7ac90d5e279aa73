import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import {
  freePort,
  type RunningNats,
  startNats,
  startOperatorModeHub,
  waitFor,
} from "@edgefleet/nats-tenancy/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayProcess } from "./support/gateway-process.js";
import { organizationLeafLinks } from "./support/leaf-links.js";
import { requireTestEnv } from "./support/required-env.js";

// The console's way to a site's leaf bundle: the gateway's internal API, behind a shared
// secret. The generated config must really run a leaf node that links up with the hub.

const TOKEN = randomBytes(24).toString("base64url");
const workDir = mkdtempSync(join(tmpdir(), "ef-internal-api-"));
let secrets: TenancySecrets;
let hub: RunningNats & { leafUrl: string };
let leaf: RunningNats | undefined;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let leafy: { organizationId: string; siteId: string };
let otherSiteId: string;

beforeAll(async () => {
  secrets = await createTenancySecrets("internal-api-test");
  hub = await startOperatorModeHub(secrets);
  database = await createMigratedDatabase();
  db = database.db;
  const organization = await db.organization.create({ data: { slug: "leafy", name: "Leafy" } });
  const site = await db.site.create({ data: { organizationId: organization.id, name: "plant-7" } });
  leafy = { organizationId: organization.id, siteId: site.id };
  const other = await db.organization.create({ data: { slug: "other", name: "Other" } });
  otherSiteId = (await db.site.create({ data: { organizationId: other.id, name: "plant-7" } })).id;
  const file = (name: string, content: string) => {
    writeFileSync(join(workDir, name), content);
    return join(workDir, name);
  };
  gateway = await GatewayProcess.start({
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    NATS_LEAF_URL: hub.leafUrl,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
    GATEWAY_INTERNAL_TOKEN: TOKEN,
    GATEWAY_HEALTH_INTERVAL_MS: "500",
  });
  await gateway.waitForReadyz(200);
});

afterAll(async () => {
  await gateway?.kill();
  await leaf?.stop();
  await hub?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

async function leafBundle(siteId: string, body: unknown, token: string | null = TOKEN) {
  const response = await fetch(`${gateway.baseUrl}/internal/sites/${siteId}/leaf-bundle`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

describe("gateway internal API", () => {
  it("refuses a missing or wrong secret with 401 and mints nothing", async () => {
    const input = { organizationId: leafy.organizationId };
    const missing = await leafBundle(leafy.siteId, input, null);
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: "send Authorization: Bearer <GATEWAY_INTERNAL_TOKEN>" });
    const wrong = await leafBundle(leafy.siteId, input, `${TOKEN.slice(0, -1)}x`);
    expect(wrong).toEqual({ status: 401, body: { error: "wrong internal token" } });
    const creds = await fetch(`${gateway.baseUrl}/internal/enroll-credentials`);
    expect(creds.status).toBe(401);
  });

  it("answers 404 for an unknown site and for another organization's site", async () => {
    const unknown = await leafBundle(randomUUID(), { organizationId: leafy.organizationId });
    expect(unknown.status).toBe(404);
    const foreign = await leafBundle(otherSiteId, { organizationId: leafy.organizationId });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toContain(`site ${otherSiteId} not found`);
    const notAnId = await leafBundle("plant-7", { organizationId: leafy.organizationId });
    expect(notAnId.status).toBe(404);
  });

  it("answers 400 naming the bad field, and 405 for the wrong method", async () => {
    const bad = await leafBundle(leafy.siteId, { organizationId: "acme", listen: "everywhere" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("organizationId");
    expect(bad.body.error).toContain("listen must be host:port");
    const get = await fetch(`${gateway.baseUrl}/internal/sites/${leafy.siteId}/leaf-bundle`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });

  it("hands out the public enrollment credentials", async () => {
    const response = await fetch(`${gateway.baseUrl}/internal/enroll-credentials`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ creds: secrets.enroll.userCreds });
  });

  it("returns a leaf config and credentials that run a real leaf node linked to the hub", async () => {
    const credentialsPath = join(workDir, "site.creds");
    const { status, body } = await leafBundle(leafy.siteId, {
      organizationId: leafy.organizationId,
      listen: `127.0.0.1:${await freePort()}`,
      credentialsPath,
      siteCache: { storeDir: join(workDir, "site-cache") },
    });
    expect(status).toBe(200);
    expect(body.config).toContain(`urls: ${JSON.stringify([hub.leafUrl])}`);
    expect(body.config).toContain(`credentials: ${JSON.stringify(credentialsPath)}`);
    expect(body.creds).toContain("-----BEGIN NATS USER JWT-----");
    expect(body.creds).toContain("-----BEGIN USER NKEY SEED-----");

    writeFileSync(credentialsPath, body.creds ?? "", { mode: 0o600 });
    const config = body.config ?? "";
    leaf = await startNats(({ monitorPort }) => `${config}\nhttp: 127.0.0.1:${monitorPort}\n`);
    await waitFor("leaf connected to the hub", async () => {
      return (await organizationLeafLinks(hub.monitorUrl, secrets)) > 0 ? true : undefined;
    });
  });
});
