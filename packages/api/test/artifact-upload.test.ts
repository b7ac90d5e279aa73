/**
 * Artifact upload end to end below the browser: the REST handler (what the Next route calls)
 * streams into the REAL gateway (child process), which stores into a real nats-server's
 * JetStream object store, and the version's state follows. The gateway side alone (cut uploads,
 * imports, bucket contents) is tested in apps/gateway/test/artifacts.integration.test.ts.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Db } from "@edgefleet/db";
import { type RunningNats, startPlainHub } from "@edgefleet/nats-tenancy/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiSession, createTRPCContext, handleRestRequest, REST_BASE_PATH } from "../src";
import { handleArtifactUpload } from "../src/artifact-upload";
import type { GatewayConnection } from "../src/gateway-client";
import { addMember, apiKeysByRole, ORG } from "./actors";
import { callerFor, sessionOf } from "./callers";
import { type RealGateway, startRealGateway } from "./real-gateway";
import { createTestDatabase, type TestDatabase } from "./test-database";

const TOKEN = randomBytes(24).toString("base64url");
const MAX_BYTES = 2 * 1024 * 1024;
let testDb: TestDatabase;
let db: Db;
let hub: RunningNats;
let gatewayProcess: RealGateway;
let gateway: GatewayConnection;
let keys: Awaited<ReturnType<typeof apiKeysByRole>>;
let operator: ApiSession;
let viewer: ApiSession;
let appId: string;
let acmeId: string;
let globexId: string;

const sha = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  hub = await startPlainHub();
  gatewayProcess = await startRealGateway({
    DATABASE_URL: testDb.url,
    NATS_URL: hub.url,
    MIMIR_URL: process.env.MIMIR_URL ?? "http://127.0.0.1:1",
    GATEWAY_INTERNAL_TOKEN: TOKEN,
    GATEWAY_ARTIFACT_MAX_BYTES: String(MAX_BYTES),
    GATEWAY_HEALTH_INTERVAL_MS: "500",
  });
  gateway = { url: gatewayProcess.baseUrl, internalToken: TOKEN };
  const alice = await sessionOf(db, "alice@acme.example");
  keys = await apiKeysByRole(db, alice, ORG);
  operator = await addMember(db, ORG, "operator", "otto@acme.example");
  viewer = await addMember(db, ORG, "viewer", "vic@acme.example");
  appId = (await callerFor(db, operator, ORG).app.create({ name: "uploaded" })).id;
  acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: ORG } })).id;
  globexId = (await db.organization.findUniqueOrThrow({ where: { slug: "globex" } })).id;
}, 90_000);

afterAll(async () => {
  await gatewayProcess?.kill();
  await hub?.stop();
  await testDb?.drop();
});

let versionCount = 0;
async function uploadVersion(declared?: string) {
  return callerFor(db, operator, ORG).appVersion.create({
    appId,
    version: `1.0.${versionCount++}`,
    runSpec: { command: ["./uploaded"] },
    artifact: { source: "upload", ...(declared ? { sha256: declared } : {}) },
  });
}

function put(
  versionId: string,
  body: Uint8Array | ReadableStream<Uint8Array>,
  key: string | null = keys.operator,
) {
  return handleRestRequest(
    new Request(`http://edgefleet.test${REST_BASE_PATH}/apps/${appId}/versions/${versionId}/artifact`, {
      method: "PUT",
      headers: key ? { authorization: `Bearer ${key}` } : {},
      body,
      duplex: "half",
    } as RequestInit),
    { db, gateway },
  );
}

/** Whether the gateway holds this content in the organization's bucket. */
async function stored(organizationId: string, digest: string): Promise<number | null> {
  const response = await fetch(`${gateway.url}/internal/orgs/${organizationId}/artifacts/${digest}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  if (response.status === 404) return null;
  return ((await response.json()) as { size: number }).size;
}

const versionRow = (id: string) => db.appVersion.findUniqueOrThrow({ where: { id } });

describe("PUT /apps/{appId}/versions/{versionId}/artifact", () => {
  it("streams the bytes into the organization's store and makes the version ready, audited", async () => {
    const data = randomBytes(1024 * 1024);
    const version = await uploadVersion(sha(data));
    const response = await put(version.id, data);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      id: version.id,
      artifact: { source: "upload", state: "ready", sha256: sha(data), size: data.length },
    });
    expect(await stored(acmeId, sha(data))).toBe(data.length);
    expect(await stored(globexId, sha(data))).toBeNull();
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "appVersion.upload", targetId: version.id },
    });
    expect(audit).toMatchObject({ actorType: "apiKey", before: { artifact: { state: "pending" } } });
    expect(audit.after).toMatchObject({ artifact: { state: "ready", sha256: sha(data) } });
    // Immutable: a second upload is refused.
    expect((await put(version.id, randomBytes(10))).status).toBe(409);
  });

  it("fails the version on a hash mismatch (400 naming sha256) and keeps nothing", async () => {
    const data = randomBytes(64 * 1024);
    const version = await uploadVersion(sha(randomBytes(16)));
    const response = await put(version.id, data);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; issues: Array<{ path: string[] }> };
    expect(body.code).toBe("BAD_REQUEST");
    expect(body.issues.map((issue) => issue.path)).toEqual([["sha256"]]);
    expect(await versionRow(version.id)).toMatchObject({
      artifactState: "failed",
      artifactError: expect.stringContaining(`the content hashes to ${sha(data)}`),
    });
    expect(await stored(acmeId, sha(data))).toBeNull();
  });

  it("refuses past the size limit (413) and leaves the version pending, even when the length is not declared", async () => {
    const version = await uploadVersion();
    const big = randomBytes(MAX_BYTES + 1);
    expect((await put(version.id, big)).status).toBe(413);
    const chunks = [randomBytes(MAX_BYTES / 2), randomBytes(MAX_BYTES / 2), randomBytes(1024)];
    const streamed = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks.shift();
        if (chunk) controller.enqueue(chunk);
        else controller.close();
      },
    });
    expect((await put(version.id, streamed)).status).toBe(413);
    expect(await versionRow(version.id)).toMatchObject({ artifactState: "pending", artifactSha256: null });
    expect(await stored(acmeId, sha(big))).toBeNull();
  });

  it("keeps nothing of a body cut in the middle; the version stays pending and takes a retry", async () => {
    const version = await uploadVersion();
    let sent = 0;
    const cut = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 3) return controller.error(new Error("client went away"));
        sent++;
        controller.enqueue(randomBytes(100_000));
      },
    });
    const response = await put(version.id, cut);
    expect(response.status).toBe(400);
    expect(await versionRow(version.id)).toMatchObject({ artifactState: "pending" });
    const data = randomBytes(5_000);
    expect((await put(version.id, data)).status).toBe(200);
    expect(await versionRow(version.id)).toMatchObject({ artifactState: "ready", artifactSha256: sha(data) });
  });

  it("authenticates and authorizes before reading a byte: no key 401, viewer 403, foreign or url version 404/409", async () => {
    const version = await uploadVersion();
    let pulled = 0;
    const counting = () =>
      new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            pulled++;
            controller.enqueue(randomBytes(10));
            controller.close();
          },
        },
        // No read-ahead: a pull means someone read the body.
        { highWaterMark: 0 },
      );
    expect((await put(version.id, counting(), null)).status).toBe(401);
    expect((await put(version.id, counting(), keys.viewer)).status).toBe(403);
    const globexVersion = await db.appVersion.findFirstOrThrow({ where: { organizationId: globexId } });
    expect((await put(globexVersion.id, counting())).status).toBe(404);
    const urlVersion = await callerFor(db, operator, ORG).appVersion.create({
      appId,
      version: "url-1",
      runSpec: { command: ["./uploaded"] },
      artifact: { source: "url", url: "https://downloads.example.com/u.tgz" },
    });
    expect((await put(urlVersion.id, counting())).status).toBe(409);
    expect(pulled).toBe(0);
    expect(await versionRow(version.id)).toMatchObject({ artifactState: "pending" });
  });

  it("takes the console's session the same way (operator yes, viewer no)", async () => {
    const data = randomBytes(1_000);
    const version = await uploadVersion();
    const asSession = (session: ApiSession) =>
      handleArtifactUpload(
        new Request("http://edgefleet.test/x", { method: "PUT", body: data }),
        { appId, versionId: version.id },
        { db, gateway },
        createTRPCContext({ db, session, activeOrganizationSlug: ORG }),
      );
    expect((await asSession(viewer)).status).toBe(403);
    expect((await asSession(operator)).status).toBe(200);
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "appVersion.upload", targetId: version.id },
    });
    expect(audit).toMatchObject({ actorType: "user", actorId: operator.userId });
  });
});
