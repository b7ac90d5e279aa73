import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { formatWireId, type NodeAddress, siteToken } from "@edgefleet/agent-sdk/protocol";
import { createPrismaClient, type Db } from "@edgefleet/db";
import { createTenancySecrets, nodeAddress, type TenancySecrets } from "@edgefleet/nats-tenancy";
import { startPlainHub } from "@edgefleet/nats-tenancy/testing";
import { createAccount, createUser } from "@nats-io/nkeys";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import pg from "pg";
import { pino } from "pino";
import { Registry } from "prom-client";
import { createEdgeServices, type EdgeConfig, type EdgeService } from "../../src/edge/index.js";
import { requireTestEnv } from "./required-env.js";

const run = promisify(execFile);
const dbPackageDir = fileURLToPath(new URL("../../../../packages/db", import.meta.url));

/** A fresh migrated database next to DATABASE_URL's (dropped by `drop`). */
export async function createTestDatabase(): Promise<{ url: string; db: Db; drop: () => Promise<void> }> {
  const serverUrl = requireTestEnv("DATABASE_URL");
  const name = `edgefleet_gwtest_${randomBytes(6).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  await run("pnpm", ["--silent", "db:migrate"], {
    cwd: dbPackageDir,
    env: { ...process.env, DATABASE_URL: url.toString() },
  });
  const db = createPrismaClient(url.toString(), { log: ["error"] });
  return {
    url: url.toString(),
    db,
    drop: async () => {
      await db.$disconnect();
      await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}

export interface TestNode {
  id: string;
  organizationId: string;
  org: string;
  wid: string;
  /** Its subjects: layout 2 on its site (`_` without one), or layout 1 (`createNode`'s `layout1`). */
  address: NodeAddress;
}

export interface EdgeHarness {
  db: Db;
  databaseUrl: string;
  nc: NatsConnection;
  registry: Registry;
  logs: Array<Record<string, unknown>>;
  services: EdgeService[];
  createOrganization(slug: string): Promise<{ id: string; org: string }>;
  /** The tenancy secrets the gateway derives downlinks and mints credentials with. */
  secrets: TenancySecrets;
  /**
   * A node that listens on its site's subjects (`site`: a site of the organization; none by
   * default), or on layout 1's (`layout1`: enrolled before site scoping), with a key.
   */
  createNode(
    organization: { id: string; org: string },
    name: string,
    options?: { siteId?: string; layout1?: boolean },
  ): Promise<TestNode>;
  createSite(organization: { id: string }, name: string): Promise<{ id: string; token: string }>;
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The edge services in this process against real servers: a fresh database on DATABASE_URL's
 * server, a private nats-server with JetStream (domain hub), Mimir from MIMIR_URL.
 */
export async function startEdgeHarness(overrides: Partial<EdgeConfig> = {}): Promise<EdgeHarness> {
  const mimirUrl = requireTestEnv("MIMIR_URL");
  const database = await createTestDatabase();
  const nats = await startPlainHub();
  const nc = await connect({ servers: nats.url, name: "gateway-under-test" });
  const registry = new Registry();
  const secrets = await createTenancySecrets("edge-harness");
  const accountKey = createAccount().getPublicKey();
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: "info" },
    { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const services = createEdgeServices(
    database.db,
    {
      databaseUrl: database.url,
      mimirUrl,
      heartbeatIntervalS: 1,
      metricsIntervalS: 1,
      livenessFlushMs: 200,
      desiredRescanMs: 1_000,
      metricsBatch: { maxBatch: 100, maxDelayMs: 100 },
      streamReplicas: async () => 1,
      credentials: { secrets, accounts: { ensure: async () => ({ accountPublicKey: accountKey }) } },
      ...overrides,
    },
    logger,
    registry,
  );
  for (const service of services) await service.start(nc);

  return {
    db: database.db,
    databaseUrl: database.url,
    nc,
    registry,
    logs,
    services,
    async createOrganization(slug) {
      const row = await database.db.organization.create({ data: { slug, name: slug } });
      return { id: row.id, org: formatWireId(row.wireId) };
    },
    secrets,
    async createNode(organization, name, options = {}) {
      const site = options.siteId
        ? await database.db.site.findUniqueOrThrow({ where: { id: options.siteId } })
        : null;
      const token = siteToken(site?.wireId ?? null);
      const row = await database.db.node.create({
        data: {
          organizationId: organization.id,
          name,
          status: "offline",
          siteId: site?.id ?? null,
          subjectSite: options.layout1 ? null : token,
          publicKey: createUser().getPublicKey(),
        },
      });
      const wid = formatWireId(row.wireId);
      return {
        id: row.id,
        organizationId: organization.id,
        org: organization.org,
        wid,
        address: options.layout1
          ? { wid, site: null, down: null }
          : nodeAddress(secrets, { org: organization.org, site: token, wid }),
      };
    },
    async createSite(organization, name) {
      const row = await database.db.site.create({ data: { organizationId: organization.id, name } });
      return { id: row.id, token: siteToken(row.wireId) };
    },
    async metric(name, labels = {}) {
      const metric = registry.getSingleMetric(name);
      if (!metric) throw new Error(`no metric ${name}`);
      const { values } = await metric.get();
      return values
        .filter((value) =>
          Object.entries(labels).every(([key, wanted]) => String(value.labels[key]) === wanted),
        )
        .reduce((sum, value) => sum + value.value, 0);
    },
    async stop() {
      for (const service of [...services].reverse()) await service.stop().catch(() => undefined);
      await nc.close().catch(() => undefined);
      await nats.stop();
      await database.drop();
    },
  };
}
