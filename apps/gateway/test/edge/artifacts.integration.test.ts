import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ArtifactChunkReply,
  artifactBucket,
  decodeMessage,
  efArtifactUrl,
  encodeMessage,
  MAX_ARTIFACT_CHUNK_BYTES,
  platformUpSubject,
} from "@edgefleet/agent-sdk/protocol";
import { setDesiredApps } from "@edgefleet/db";
import { jetstream } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeHarness, startEdgeHarness, type TestNode } from "../support/edge-harness.js";

// The gateway's artifact chunk service against a real nats-server and Postgres: objects are put
// into the organizations' buckets with the object store API, as the upload path does.

let harness: EdgeHarness;
const cacheDir = mkdtempSync(join(tmpdir(), "ef-gw-artifacts-"));
let orgA: { id: string; org: string };
let orgB: { id: string; org: string };
const content = randomBytes(MAX_ARTIFACT_CHUNK_BYTES * 2 + 4321);
const sha = createHash("sha256").update(content).digest("hex");
const other = randomBytes(1000);
const otherSha = createHash("sha256").update(other).digest("hex");
const big = randomBytes(512 * 1024 + 1);
const bigSha = createHash("sha256").update(big).digest("hex");

async function version(organization: { id: string }, app: string, label: string, artifact: object) {
  const appRow = await harness.db.app.upsert({
    where: { organizationId_name: { organizationId: organization.id, name: app } },
    create: { organizationId: organization.id, name: app },
    update: {},
  });
  return harness.db.appVersion.create({
    data: {
      organizationId: organization.id,
      appId: appRow.id,
      version: label,
      runSpec: { command: ["./artifact"] },
      artifactUrl: "",
      ...artifact,
    },
  });
}

beforeAll(async () => {
  harness = await startEdgeHarness({
    // A small artifact limit, so that "too large" is testable without a 256 MiB object.
    artifactCache: { dir: cacheDir, maxBytes: 64 * 1024 * 1024, maxArtifactBytes: 512 * 1024 },
  });
  orgA = await harness.createOrganization("art-a");
  orgB = await harness.createOrganization("art-b");
  const objm = new Objm(jetstream(harness.nc, { domain: "hub" }));
  const bucketA = await objm.create(artifactBucket(orgA.org));
  await bucketA.putBlob({ name: sha }, content);
  await bucketA.putBlob({ name: otherSha }, other);
  await bucketA.putBlob({ name: bigSha }, big);
});
afterAll(async () => {
  await harness?.stop();
  rmSync(cacheDir, { recursive: true, force: true });
});

async function ask(node: TestNode, obj: string, off: number, len = MAX_ARTIFACT_CHUNK_BYTES) {
  const reply = await harness.nc.request(
    platformUpSubject(node.org, node.address, "art"),
    encodeMessage("artifactChunkRequest", { v: 1, obj, off, len }),
    { timeout: 5_000 },
  );
  const decoded = decodeMessage("artifactChunkReply", reply.data);
  if (!decoded.ok) throw new Error(decoded.detail);
  return decoded.msg;
}

async function download(node: TestNode, obj: string): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  let offset = 0;
  let size = Number.POSITIVE_INFINITY;
  while (offset < size) {
    const reply: ArtifactChunkReply = await ask(node, obj, offset);
    if (reply.err) throw new Error(`${reply.err}: ${reply.why}`);
    size = reply.size ?? 0;
    parts.push(reply.data ?? new Uint8Array());
    offset += reply.data?.byteLength ?? 0;
  }
  return Buffer.concat(parts);
}

describe("artifact chunks", () => {
  it("serves a node the artifact of its desired version in chunks, counted per organization", async () => {
    const node = await harness.createNode(orgA, "puller");
    const v1 = await version(orgA, "web", "1.0", { artifactUrl: efArtifactUrl(sha), artifactSha256: sha });
    await setDesiredApps(harness.db, orgA.id, node.id, { put: [v1.id] });
    const servedBefore = await harness.metric("edgefleet_gateway_artifact_bytes_served_total", {
      org: orgA.id,
    });

    const first = await ask(node, sha, 0);
    expect(first).toMatchObject({ off: 0, size: content.byteLength });
    expect(first.data?.byteLength).toBe(MAX_ARTIFACT_CHUNK_BYTES);
    const bytes = await download(node, sha);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(sha);

    // The end: an empty chunk at the size, bad_range past it.
    expect(await ask(node, sha, content.byteLength)).toMatchObject({ size: content.byteLength });
    expect((await ask(node, sha, content.byteLength)).data?.byteLength).toBe(0);
    expect(await ask(node, sha, content.byteLength + 1)).toMatchObject({ err: "bad_range" });

    expect(await harness.metric("edgefleet_gateway_artifact_bytes_served_total", { org: orgA.id })).toBe(
      servedBefore + MAX_ARTIFACT_CHUNK_BYTES + content.byteLength,
    );
    // The bucket was read once; every later chunk came from the disk cache.
    expect(await harness.metric("edgefleet_gateway_artifact_cache_fills_total", { result: "ok" })).toBe(1);
  });

  it("refuses a node of the same organization that is not meant to run the version", async () => {
    const bystander = await harness.createNode(orgA, "bystander");
    expect(await ask(bystander, sha, 0)).toEqual({
      v: 1,
      err: "not_allowed",
      why: "this node is not meant to run a version with this artifact",
    });
    // Nor another object of its organization's bucket that none of its versions names.
    const node = await harness.createNode(orgA, "one-app");
    const v = await version(orgA, "api", "1.0", { artifactUrl: efArtifactUrl(sha), artifactSha256: sha });
    await setDesiredApps(harness.db, orgA.id, node.id, { put: [v.id] });
    expect(await ask(node, otherSha, 0)).toMatchObject({ err: "not_allowed" });
  });

  it("never serves another organization's artifact, even to a node whose version names its hash", async () => {
    const foreign = await harness.createNode(orgB, "foreign");
    expect(await ask(foreign, sha, 0)).toMatchObject({ err: "not_allowed" });
    // Org B's version claims org A's hash: the request is answered from org B's bucket only.
    const claimant = await harness.createNode(orgB, "claimant");
    const claim = await version(orgB, "web", "1.0", { artifactUrl: efArtifactUrl(sha), artifactSha256: sha });
    await setDesiredApps(harness.db, orgB.id, claimant.id, { put: [claim.id] });
    expect(await ask(claimant, sha, 0)).toMatchObject({ err: "not_found" });
    expect(await harness.metric("edgefleet_gateway_artifact_bytes_served_total", { org: orgB.id })).toBe(0);
  });

  it("serves the version a node reported running (for a revert), and an HTTPS artifact imported under its hash", async () => {
    const node = await harness.createNode(orgA, "reverter");
    const imported = await version(orgA, "imported", "1.0", {
      artifactUrl: "https://releases.example/imported-1.0.tar.gz",
      artifactSha256: otherSha,
    });
    const newer = await version(orgA, "imported", "2.0", {
      artifactUrl: efArtifactUrl(sha),
      artifactSha256: sha,
    });
    await setDesiredApps(harness.db, orgA.id, node.id, { put: [imported.id] });
    expect(await download(node, otherSha)).toEqual(other);

    await setDesiredApps(harness.db, orgA.id, node.id, { put: [newer.id] });
    await harness.db.appInstance.updateMany({
      where: { nodeId: node.id },
      data: { observedVersionId: imported.id, state: "running" },
    });
    expect(await ask(node, otherSha, 0)).toMatchObject({ off: 0, size: other.byteLength });
    expect(await ask(node, sha, 0)).toMatchObject({ off: 0, size: content.byteLength });
  });

  it("puts the artifact in the desired state on the wire as a hash, never a URL", async () => {
    const node = await harness.createNode(orgA, "wire");
    const wrong = "0".repeat(64);
    const mislabelled = await version(orgA, "mislabelled", "1.0", {
      artifactUrl: efArtifactUrl(sha),
      artifactSha256: wrong,
    });
    const plain = await version(orgA, "plain", "1.0", { artifactUrl: "builtin:plain" });
    await setDesiredApps(harness.db, orgA.id, node.id, { put: [mislabelled.id, plain.id] });
    const reply = await harness.nc.request(
      platformUpSubject(node.org, node.address, "hello"),
      encodeMessage("hello", { v: 1, av: "0.1.0", os: "linux", arch: "x64", boot: "b", rev: 0 }),
      { timeout: 5_000 },
    );
    const hello = decodeMessage("helloReply", reply.data);
    expect(hello.ok && hello.msg.d?.put).toEqual([
      { app: "mislabelled", ver: "1.0", spec: { command: ["./artifact"] }, art: { sha: wrong, obj: sha } },
      { app: "plain", ver: "1.0", spec: { command: ["./artifact"] } },
    ]);
  });

  it("refuses an artifact over the size limit before reading it", async () => {
    const node = await harness.createNode(orgA, "big");
    const v = await version(orgA, "big", "1.0", {
      artifactUrl: efArtifactUrl(bigSha),
      artifactSha256: bigSha,
    });
    await setDesiredApps(harness.db, orgA.id, node.id, { put: [v.id] });
    expect(await ask(node, bigSha, 0)).toEqual({
      v: 1,
      err: "too_large",
      why: `${big.byteLength} bytes, over the ${512 * 1024}-byte limit`,
    });
  });

  it("does not answer a malformed request, and counts it", async () => {
    const node = await harness.createNode(orgA, "malformed");
    const before = await harness.metric("edgefleet_gateway_rejected_messages_total", {
      type: "art",
      reason: "invalid",
    });
    const tooLong = Uint8Array.from([
      ...encodeMessage("artifactChunkRequest", { v: 1, obj: sha, off: 0, len: 1 }).slice(0, -1),
      0xce,
      0x00,
      0x10,
      0x00,
      0x00,
    ]);
    await expect(
      harness.nc.request(platformUpSubject(node.org, node.address, "art"), tooLong, { timeout: 500 }),
    ).rejects.toThrow();
    expect(
      await harness.metric("edgefleet_gateway_rejected_messages_total", { type: "art", reason: "invalid" }),
    ).toBe(before + 1);
  });
});
