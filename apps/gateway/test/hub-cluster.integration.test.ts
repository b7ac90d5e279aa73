import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EF_UP_STREAM } from "@edgefleet/agent-sdk/protocol";
import type { Db } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";
import { createTenancySecrets, type TenancySecrets } from "@edgefleet/nats-tenancy";
import {
  type RunningNats,
  startOperatorModeCluster,
  startOperatorModeHub,
  waitFor,
} from "@edgefleet/nats-tenancy/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Objm, StorageType } from "@nats-io/obj";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { artifactBucketName } from "../src/artifacts/bucket.js";
import { HubReplicas, streamReplicasFor } from "../src/hub-replicas.js";
import { GatewayProcess } from "./support/gateway-process.js";
import { requireTestEnv } from "./support/required-env.js";

// The gateway on a three-node hub cluster (the `ha` profile's shape): the streams it owns, EF_UP
// and the organizations' artifact stores, are replicated on every node (R3), so a PubAck or an
// upload means a quorum holds it and one node's loss loses nothing (docs/ha.md).

const TOKEN = randomBytes(24).toString("base64url");
const workDir = mkdtempSync(join(tmpdir(), "ef-hub-cluster-"));
const silent = pino({ level: "silent" });
let secrets: TenancySecrets;
let cluster: Awaited<ReturnType<typeof startOperatorModeCluster>>;
let nc: NatsConnection;
let database: TestDatabase;
let db: Db;
let gateway: GatewayProcess;
let acme: { id: string; wireId: bigint };

const file = (name: string, content: string) => {
  writeFileSync(join(workDir, name), content);
  return join(workDir, name);
};

beforeAll(async () => {
  secrets = await createTenancySecrets("hub-cluster");
  cluster = await startOperatorModeCluster(secrets, 3);
  nc = await connect({
    servers: cluster.urls,
    authenticator: credsAuthenticator(new TextEncoder().encode(secrets.platform.userCreds)),
  });
  database = await createMigratedDatabase();
  db = database.db;
  acme = await db.organization.create({ data: { slug: "acme", name: "Acme" } });
  // A bucket an older gateway made on this hub before it was a cluster: one copy.
  await new Objm(jetstream(nc, { domain: "hub" })).create(artifactBucketName(acme.wireId), {
    storage: StorageType.File,
  });
  gateway = await GatewayProcess.start({
    DATABASE_URL: database.url,
    NATS_URL: cluster.urls.join(","),
    MIMIR_URL: requireTestEnv("MIMIR_URL"),
    NATS_CREDS: file("gateway.creds", secrets.platform.userCreds),
    NATS_SYSTEM_CREDS: file("system.creds", secrets.system.userCreds),
    NATS_TENANCY_FILE: file("tenancy.json", JSON.stringify(secrets)),
    GATEWAY_INTERNAL_TOKEN: TOKEN,
    GATEWAY_HEALTH_INTERVAL_MS: "500",
  });
  await waitFor(
    "the gateway's ingest",
    () => (gateway.output.join("").includes('"service":"up-ingest"') ? true : undefined),
    60_000,
  );
});

afterAll(async () => {
  await gateway?.kill();
  await nc?.close();
  await cluster?.stop();
  await database?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

describe("hub stream replicas follow the deployment", () => {
  it("are the JetStream cluster's size, at most 3", () => {
    expect([0, 1, 2, 3, 5, 7].map(streamReplicasFor)).toEqual([1, 1, 2, 3, 3, 3]);
  });

  it("make EF_UP an R3 stream on a three-node cluster", async () => {
    const info = await (await jetstreamManager(nc, { domain: "hub" })).streams.info(EF_UP_STREAM);
    expect(info.config.num_replicas).toBe(3);
    // A leader and two current followers: a quorum acknowledges every report.
    await waitFor("EF_UP's followers current", async () => {
      const now = await (await jetstreamManager(nc, { domain: "hub" })).streams.info(EF_UP_STREAM);
      return now.cluster?.replicas?.length === 2 && now.cluster.replicas.every((peer) => peer.current)
        ? true
        : undefined;
    });
  });

  it("scale an organization's artifact store made with one copy up to three on its next upload", async () => {
    const body = randomBytes(4096);
    const response = await fetch(`${gateway.baseUrl}/internal/orgs/${acme.id}/artifacts`, {
      method: "PUT",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/octet-stream",
        "x-artifact-sha256": createHash("sha256").update(body).digest("hex"),
      },
      body,
    });
    expect(response.status, await response.clone().text()).toBeLessThan(300);
    const info = await (await jetstreamManager(nc, { domain: "hub" })).streams.info(
      `OBJ_${artifactBucketName(acme.wireId)}`,
    );
    expect(info.config.num_replicas).toBe(3);
  });

  it("are 1 on a single server", async () => {
    let single: RunningNats | undefined;
    try {
      single = await startOperatorModeHub(secrets);
      const replicas = new HubReplicas([single.url], file("system.creds", secrets.system.userCreds), silent);
      expect(await replicas.get()).toBe(1);
    } finally {
      await single?.stop();
    }
  });
});
