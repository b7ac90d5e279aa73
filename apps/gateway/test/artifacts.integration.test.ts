import { execFileSync } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { Db } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { type RunningNats, startPlainHub, waitFor } from "@edgefleet/nats-tenancy/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { artifactBucketName } from "../src/artifacts/bucket.js";
import { GatewayProcess } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";

// Artifacts through the gateway's internal API into real JetStream object store buckets, one per
// organization: upload, size cap, cut upload, wrong hash, URL import (async, through the
// importer), and isolation between organizations.

const TOKEN = randomBytes(24).toString("base64url");
const MAX_BYTES = 1024 * 1024;
const workDir = mkdtempSync(join(tmpdir(), "ef-artifacts-"));
let hub: RunningNats;
let nc: NatsConnection;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let origin: Server;
let originUrl: string;
const originFiles = new Map<string, Buffer>();
let acme: { id: string; wireId: bigint };
let globex: { id: string; wireId: bigint };

const sha = (data: Buffer) => createHash("sha256").update(data).digest("hex");

/** A self-signed certificate for 127.0.0.1 that the gateway trusts through NODE_EXTRA_CA_CERTS. */
function selfSigned() {
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      join(workDir, "key.pem"),
      "-out",
      join(workDir, "cert.pem"),
    ],
    { stdio: "ignore" },
  );
  return { key: readFileSync(join(workDir, "key.pem")), cert: readFileSync(join(workDir, "cert.pem")) };
}

beforeAll(async () => {
  const tls = selfSigned();
  origin = createServer(tls, (req, res) => {
    const file = originFiles.get(req.url ?? "");
    if (req.url === "/redirect") {
      res.writeHead(302, { location: "/a.bin" });
      return res.end();
    }
    if (!file) {
      res.writeHead(404);
      return res.end("no such file");
    }
    res.writeHead(200, { "content-type": "application/octet-stream" });
    res.end(file);
  });
  origin.listen(0, "127.0.0.1");
  await once(origin, "listening");
  originUrl = `https://127.0.0.1:${(origin.address() as AddressInfo).port}`;

  hub = await startPlainHub();
  nc = await connect({ servers: hub.url });
  database = await createMigratedDatabase();
  db = database.db;
  acme = await db.organization.create({ data: { slug: "acme", name: "Acme" } });
  globex = await db.organization.create({ data: { slug: "globex", name: "Globex" } });
  gateway = await GatewayProcess.start({
    DATABASE_URL: database.url,
    NATS_URL: hub.url,
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    GATEWAY_INTERNAL_TOKEN: TOKEN,
    GATEWAY_HEALTH_INTERVAL_MS: "500",
    GATEWAY_ARTIFACT_MAX_BYTES: String(MAX_BYTES),
    GATEWAY_ARTIFACT_IMPORT_ALLOW_PRIVATE: "true",
    GATEWAY_ARTIFACT_IMPORT_POLL_MS: "200",
    NODE_EXTRA_CA_CERTS: join(workDir, "cert.pem"),
  });
  await waitFor("the gateway's edge services", () =>
    gateway.output.join("").includes('"service":"artifact-importer"') ? true : undefined,
  );
});

afterAll(async () => {
  await gateway?.kill();
  await nc?.close();
  await hub?.stop();
  await database?.drop();
  origin?.close();
  rmSync(workDir, { recursive: true, force: true });
});

function put(organizationId: string, body: Buffer, headers: Record<string, string> = {}) {
  return fetch(`${gateway.baseUrl}/internal/orgs/${organizationId}/artifacts`, {
    method: "PUT",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/octet-stream", ...headers },
    body,
  });
}

async function json(response: Response) {
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Every message subject in an organization's bucket stream: what the bucket holds, traces included. */
async function bucketSubjects(organization: { wireId: bigint }): Promise<Record<string, number>> {
  const jsm = await jetstreamManager(nc, { domain: "hub" });
  try {
    const info = await jsm.streams.info(`OBJ_${artifactBucketName(organization.wireId)}`, {
      subjects_filter: ">",
    });
    return (info.state.subjects ?? {}) as Record<string, number>;
  } catch {
    return {};
  }
}

/** Names of the objects (meta entries, deletion markers included) in an organization's bucket. */
async function objectNames(organization: { wireId: bigint }): Promise<string[]> {
  return Object.keys(await bucketSubjects(organization))
    .filter((subject) => subject.includes(".M."))
    .map((subject) => Buffer.from(subject.split(".M.")[1] ?? "", "base64url").toString("utf8"))
    .sort();
}

describe("artifacts in the organizations' object store", () => {
  it("stores an upload under its SHA-256, once for the same bytes, and answers its size", async () => {
    const data = randomBytes(300_000);
    const first = await json(await put(acme.id, data));
    expect(first).toEqual({
      status: 200,
      body: { sha256: sha(data), size: data.length, deduplicated: false },
    });
    const again = await json(await put(acme.id, data, { "x-artifact-sha256": sha(data) }));
    expect(again.body).toEqual({ sha256: sha(data), size: data.length, deduplicated: true });
    const info = await json(
      await fetch(`${gateway.baseUrl}/internal/orgs/${acme.id}/artifacts/${sha(data)}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      }),
    );
    expect(info).toEqual({ status: 200, body: { sha256: sha(data), size: data.length } });
    // One object: one meta entry, named by the hash, nothing temporary left.
    expect(await objectNames(acme)).toEqual([sha(data)]);
  });

  it("refuses a wrong declared hash with 400 naming sha256, keeping nothing", async () => {
    const before = await bucketSubjects(acme);
    const data = randomBytes(50_000);
    const wrong = sha(randomBytes(8));
    const answer = await json(await put(acme.id, data, { "x-artifact-sha256": wrong }));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ field: "sha256", actual: sha(data) });
    expect(String(answer.body.error)).toContain(`declared ${wrong}`);
    expect(await bucketSubjects(acme)).toEqual(before);
  });

  it("refuses past the size cap with 413, by declared length and by counted bytes", async () => {
    const before = await bucketSubjects(acme);
    const declared = await json(await put(acme.id, randomBytes(MAX_BYTES + 1)));
    expect(declared).toMatchObject({ status: 413, body: { maxBytes: MAX_BYTES } });
    // Chunked (no Content-Length): the gateway counts and stops at the cap.
    const chunks = [randomBytes(600_000), randomBytes(600_000)];
    const streamed = await fetch(`${gateway.baseUrl}/internal/orgs/${acme.id}/artifacts`, {
      method: "PUT",
      headers: { authorization: `Bearer ${TOKEN}` },
      body: new ReadableStream({
        pull(controller) {
          const chunk = chunks.shift();
          if (chunk) controller.enqueue(chunk);
          else controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(await bucketSubjects(acme)).toEqual(before);
  });

  it("keeps nothing of an upload cut in the middle", async () => {
    const before = await bucketSubjects(acme);
    const url = new URL(`${gateway.baseUrl}/internal/orgs/${acme.id}/artifacts`);
    const req = request(url, {
      method: "PUT",
      headers: { authorization: `Bearer ${TOKEN}`, "content-length": String(800_000) },
    });
    req.on("error", () => undefined);
    req.write(randomBytes(400_000));
    await delay(300);
    req.destroy();
    // The gateway notices, the object store purges what it wrote: the stream is as before.
    await waitFor("the cut upload's chunks to be purged", async () =>
      JSON.stringify(await bucketSubjects(acme)) === JSON.stringify(before) ? true : undefined,
    );
    await delay(500);
    expect(await bucketSubjects(acme)).toEqual(before);
  });

  it("keeps organizations apart: another organization's bucket and id reach nothing", async () => {
    const data = randomBytes(10_000);
    await put(globex.id, data);
    const lookup = (organizationId: string) =>
      fetch(`${gateway.baseUrl}/internal/orgs/${organizationId}/artifacts/${sha(data)}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
    expect((await lookup(globex.id)).status).toBe(200);
    expect((await lookup(acme.id)).status).toBe(404);
    expect((await lookup(randomUUID())).status).toBe(404);
    expect(artifactBucketName(acme.wireId)).not.toBe(artifactBucketName(globex.wireId));
    expect(await objectNames(globex)).toEqual([sha(data)]);
    expect(await objectNames(acme)).not.toContain(sha(data));
    // Without the internal token: nothing.
    const anonymous = await fetch(`${gateway.baseUrl}/internal/orgs/${acme.id}/artifacts`, {
      method: "PUT",
      body: data,
    });
    expect(anonymous.status).toBe(401);
  });

  it("imports an https URL synchronously, following redirects and checking the hash", async () => {
    const data = randomBytes(200_000);
    originFiles.set("/a.bin", data);
    const importUrl = (body: unknown) =>
      fetch(`${gateway.baseUrl}/internal/orgs/${acme.id}/artifacts/import`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(json);
    expect(await importUrl({ url: `${originUrl}/redirect`, sha256: sha(data) })).toMatchObject({
      status: 200,
      body: { sha256: sha(data), size: data.length },
    });
    expect(await importUrl({ url: `${originUrl}/a.bin`, sha256: sha(randomBytes(4)) })).toMatchObject({
      status: 400,
      body: { field: "sha256" },
    });
    expect(await importUrl({ url: `http://127.0.0.1:1/a.bin` })).toMatchObject({
      status: 422,
      body: { field: "url", error: "url: only https:// URLs can be imported" },
    });
    expect(await importUrl({ url: `${originUrl}/missing` })).toMatchObject({ status: 422 });
  });

  it("imports pending URL versions in the background: ready with hash and size, or failed with the reason", async () => {
    const data = randomBytes(120_000);
    originFiles.set("/v2.bin", data);
    const app = await db.app.create({ data: { organizationId: acme.id, name: "web" } });
    const version = (label: string, url: string, artifactSha256?: string) =>
      db.appVersion.create({
        data: {
          organizationId: acme.id,
          appId: app.id,
          version: label,
          artifactSource: "url",
          artifactUrl: url,
          artifactSha256: artifactSha256 ?? null,
          runSpec: { command: ["./web"] },
        },
      });
    const good = await version("2.0", `${originUrl}/v2.bin`);
    const badHash = await version("2.1", `${originUrl}/v2.bin`, sha(randomBytes(4)));
    const missing = await version("2.2", `${originUrl}/gone.bin`);
    const settled = async (id: string) =>
      waitFor(
        `version ${id} to settle`,
        async () => {
          const row = await db.appVersion.findUniqueOrThrow({ where: { id } });
          return row.artifactState === "pending" ? undefined : row;
        },
        20_000,
      );
    expect(await settled(good.id)).toMatchObject({
      artifactState: "ready",
      artifactSha256: sha(data),
      artifactSize: BigInt(data.length),
      artifactError: null,
    });
    expect(await settled(badHash.id)).toMatchObject({ artifactState: "failed" });
    expect((await settled(badHash.id)).artifactError).toContain("sha256: declared");
    expect(await settled(missing.id)).toMatchObject({
      artifactState: "failed",
      artifactError: expect.stringContaining("HTTP 404"),
    });
  });

  it("leaves a version another replica holds alone until its lease expires, then imports it", async () => {
    const data = randomBytes(30_000);
    originFiles.set("/leased.bin", data);
    const app = await db.app.create({ data: { organizationId: acme.id, name: "leased" } });
    // Claimed by a replica that then died: its lease runs 2 more seconds.
    const version = await db.appVersion.create({
      data: {
        organizationId: acme.id,
        appId: app.id,
        version: "1.0",
        artifactSource: "url",
        artifactUrl: `${originUrl}/leased.bin`,
        importAttempts: 1,
        importLeaseUntil: new Date(Date.now() + 2_000),
        runSpec: { command: ["./leased"] },
      },
    });
    await delay(1_000);
    expect(await db.appVersion.findUniqueOrThrow({ where: { id: version.id } })).toMatchObject({
      artifactState: "pending",
      importAttempts: 1,
    });
    const row = await waitFor(
      "the expired lease to be taken over",
      async () => {
        const current = await db.appVersion.findUniqueOrThrow({ where: { id: version.id } });
        return current.artifactState === "pending" ? undefined : current;
      },
      10_000,
    );
    expect(row).toMatchObject({ artifactState: "ready", artifactSha256: sha(data), importAttempts: 2 });
  });
});
