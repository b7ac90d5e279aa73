import pg from "pg";
import { Progress } from "../progress.js";
import {
  bucketCase,
  DISTRIBUTIONS,
  nodeChunks,
  type OrganizationPlan,
  planTotals,
  REGIONS,
  type SeedPlan,
} from "./seed-plan.js";

/**
 * Seeds a plan with set-based SQL (generate_series, one INSERT … SELECT per chunk of nodes and
 * one for their app instances) on one connection. Ids are UUIDv7 like the application's, in
 * creation order. Foreign-key triggers are off for this session only (the rows are consistent
 * by construction; the checks would cost one index probe per reference). Then VACUUM ANALYZE:
 * the planner's statistics and the visibility map an always-on database would have.
 */

// UUIDv7 from a millisecond timestamp: 48 bits of time over a random v4, version bits set to 7.
const UUID7_FUNCTION = `
CREATE FUNCTION pg_temp.uuid7_at(ms bigint) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
    PLACING substring(int8send(ms) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
$$`;

/** 0..99 from a hash of the node index and a salt: independent, repeatable draws per label. */
const bucket = (salt: number) => `(abs(hashint4(g + ${salt * 7919})) % 100)`;

export interface SeedResult {
  organizations: Array<{ slug: string; id: string; nodes: number; appInstances: number; sites: number }>;
  seconds: { nodes: number; appInstances: number; vacuum: number; total: number };
  tableSizes: Array<{ table: string; rows: number; totalMiB: number }>;
}

export async function seedFleet(databaseUrl: string, plan: SeedPlan): Promise<SeedResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("SET session_replication_role = replica");
    await client.query("SET synchronous_commit = off");
    await client.query(UUID7_FUNCTION);
    const totals = planTotals(plan);
    const progress = new Progress("seed", totals.nodes + totals.appInstances);
    const started = Date.now();
    const spent = { nodes: 0, appInstances: 0 };
    let rows = 0;
    const result: SeedResult["organizations"] = [];
    for (const organization of plan.organizations) {
      const id = await organizationId(client, organization.slug);
      await insertSites(client, id, organization);
      const apps = await insertApps(client, id, organization);
      for (const chunk of nodeChunks(organization.nodes, plan.chunkNodes)) {
        let mark = Date.now();
        rows += await insertNodes(client, id, organization, chunk);
        spent.nodes += Date.now() - mark;
        progress.update(rows, `${organization.slug}: nodes ${chunk.to.toLocaleString("en")}`);
        mark = Date.now();
        if (apps > 0) rows += await insertInstances(client, id, chunk);
        spent.appInstances += Date.now() - mark;
        progress.update(
          rows,
          `${organization.slug}: app instances of ${chunk.to.toLocaleString("en")} nodes`,
        );
      }
      result.push({
        slug: organization.slug,
        id,
        nodes: organization.nodes,
        appInstances: organization.nodes * organization.appsPerNode,
        sites: organization.sites,
      });
    }
    progress.finish(
      `${totals.nodes.toLocaleString("en")} nodes, ${totals.appInstances.toLocaleString("en")} app instances in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    const vacuumStart = Date.now();
    const vacuum = new Progress("vacuum", 4);
    const tables = ["site", "node", "app_instance", "app_version"];
    for (const [i, table] of tables.entries()) {
      vacuum.update(i, `VACUUM (ANALYZE) ${table}`);
      await client.query(`VACUUM (ANALYZE) ${table}`);
    }
    const vacuumMs = Date.now() - vacuumStart;
    vacuum.finish(`VACUUM (ANALYZE) in ${(vacuumMs / 1000).toFixed(0)} s`);
    return {
      organizations: result,
      seconds: {
        nodes: spent.nodes / 1000,
        appInstances: spent.appInstances / 1000,
        vacuum: vacuumMs / 1000,
        total: (Date.now() - started) / 1000,
      },
      tableSizes: await tableSizes(client, ["node", "app_instance", "site"]),
    };
  } finally {
    await client.end();
  }
}

async function organizationId(client: pg.Client, slug: string): Promise<string> {
  const { rows } = await client.query<{ id: string }>("SELECT id::text FROM organization WHERE slug = $1", [
    slug,
  ]);
  const id = rows[0]?.id;
  if (!id) throw new Error(`organization ${slug} is missing: the demo seed must run first`);
  return id;
}

async function insertSites(client: pg.Client, orgId: string, plan: OrganizationPlan): Promise<void> {
  // Names may meet the demo's sites (plant-7 …): those are kept and get the load nodes too.
  await client.query(
    `INSERT INTO site (id, organization_id, name, description, updated_at)
     SELECT pg_temp.uuid7_at((extract(epoch FROM now()) * 1000)::bigint + g), $1::uuid, 'plant-' || g,
            'Load site ' || g || ' (' || ($3::text[])[1 + (g - 1) % cardinality($3::text[])] || ')', now()
     FROM generate_series(1, $2::int) g
     ON CONFLICT (organization_id, name) DO NOTHING`,
    [orgId, plan.sites, REGIONS],
  );
}

/** `appsPerNode` apps with two versions each; returns how many apps. */
async function insertApps(client: pg.Client, orgId: string, plan: OrganizationPlan): Promise<number> {
  await client.query(
    `INSERT INTO app (id, organization_id, name, description, updated_at)
     SELECT gen_random_uuid(), $1::uuid, 'svc-' || g, 'Load app ' || g, now() FROM generate_series(1, $2::int) g
     ON CONFLICT (organization_id, name) DO NOTHING`,
    [orgId, plan.appsPerNode],
  );
  await client.query(
    `INSERT INTO app_version (id, organization_id, app_id, version, artifact_url, run_spec)
     SELECT gen_random_uuid(), a.organization_id, a.id, v.version,
            'https://artifacts.example/' || a.name || '/' || v.version || '.tar.gz', '{"command":["run"]}'::jsonb
     FROM app a CROSS JOIN (VALUES ('1.0.0'), ('1.1.0')) v(version)
     WHERE a.organization_id = $1::uuid AND a.name LIKE 'svc-%'
     ON CONFLICT (organization_id, app_id, version) DO NOTHING`,
    [orgId],
  );
  return plan.appsPerNode;
}

async function insertNodes(
  client: pg.Client,
  orgId: string,
  plan: OrganizationPlan,
  chunk: { from: number; to: number },
): Promise<number> {
  const status = bucketCase(bucket(1), DISTRIBUTIONS.status, "::node_status");
  const result = await client.query(
    `INSERT INTO node (id, organization_id, name, site_id, labels, status, agent_version, last_seen_at,
                       enrolled_at, desired_revision, applied_revision, updated_at)
     SELECT pg_temp.uuid7_at(base_ms + g), $1::uuid, 'edge-' || lpad(g::text, 6, '0'), s.id,
            jsonb_build_object('site', s.name, 'region', ($3::text[])[1 + (site_no - 1) % cardinality($3::text[])],
                               'tier', ${bucketCase(bucket(2), DISTRIBUTIONS.tier)},
                               'hw', ${bucketCase(bucket(3), DISTRIBUTIONS.hw)}),
            st,
            CASE WHEN st = 'pending' THEN NULL ELSE ${bucketCase(bucket(4), DISTRIBUTIONS.agentVersion)} END,
            CASE st WHEN 'pending' THEN NULL
                    WHEN 'online' THEN now() - make_interval(secs => abs(hashint4(g)) % 60)
                    ELSE now() - make_interval(secs => 3600 + abs(hashint4(g)) % 604800) END,
            now() - make_interval(secs => 86400 + g), 10, CASE WHEN st = 'online' THEN 10 ELSE 9 END, now()
     FROM (SELECT g, 1 + (g - 1) % $2::int AS site_no, ${status} AS st,
                  (extract(epoch FROM now()) * 1000)::bigint - 1000000 AS base_ms
           FROM generate_series($4::int, $5::int) g) n
     JOIN site s ON s.organization_id = $1::uuid AND s.name = 'plant-' || n.site_no`,
    [orgId, plan.sites, REGIONS, chunk.from, chunk.to],
  );
  return result.rowCount ?? 0;
}

async function insertInstances(
  client: pg.Client,
  orgId: string,
  chunk: { from: number; to: number },
): Promise<number> {
  const state = bucketCase(
    "(abs(hashint4(n.wire_id::int * 31 + v.app_no)) % 100)",
    DISTRIBUTIONS.instanceState,
  );
  const result = await client.query(
    `INSERT INTO app_instance (id, organization_id, node_id, app_id, desired_version_id, observed_version_id,
                               state, reason, desired_revision, restarts, created_at, updated_at)
     SELECT pg_temp.uuid7_at((extract(epoch FROM now()) * 1000)::bigint - 1000000 + n.wire_id * 16 + v.app_no),
            n.organization_id, n.id, v.app_id,
            CASE WHEN n.labels->>'tier' = 'canary' THEN v.new_id ELSE v.old_id END,
            CASE WHEN n.status = 'pending' THEN NULL ELSE v.old_id END,
            st::app_instance_state, CASE WHEN st = 'failed' THEN 'exited with code 1' END,
            10, abs(hashint4(n.wire_id::int + v.app_no)) % 3, now(), now()
     FROM node n
     CROSS JOIN (SELECT a.id AS app_id, substring(a.name FROM 5)::int AS app_no,
                        max(av.id::text) FILTER (WHERE av.version = '1.0.0')::uuid AS old_id,
                        max(av.id::text) FILTER (WHERE av.version = '1.1.0')::uuid AS new_id
                 FROM app a JOIN app_version av ON av.app_id = a.id
                 WHERE a.organization_id = $1::uuid AND a.name LIKE 'svc-%' GROUP BY a.id, a.name) v
     CROSS JOIN LATERAL (SELECT CASE WHEN n.status = 'pending' THEN 'pending' ELSE ${state} END AS st) s
     WHERE n.organization_id = $1::uuid AND n.name BETWEEN $2 AND $3`,
    [orgId, `edge-${String(chunk.from).padStart(6, "0")}`, `edge-${String(chunk.to).padStart(6, "0")}`],
  );
  return result.rowCount ?? 0;
}

async function tableSizes(client: pg.Client, tables: string[]): Promise<SeedResult["tableSizes"]> {
  const { rows } = await client.query<{ table: string; rows: string; bytes: string }>(
    `SELECT relname AS table, reltuples::bigint::text AS rows, pg_total_relation_size(oid)::text AS bytes
     FROM pg_class WHERE relname = ANY($1::text[]) ORDER BY relname`,
    [tables],
  );
  return rows.map((row) => ({
    table: row.table,
    rows: Number(row.rows),
    totalMiB: Number(row.bytes) / 2 ** 20,
  }));
}
