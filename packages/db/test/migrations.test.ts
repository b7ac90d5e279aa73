import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmptyDatabase, migrate, type TestDatabase, withAdminClient } from "./support/test-database";

const run = promisify(execFile);

describe("migrations", () => {
  let database: Omit<TestDatabase, "db">;
  beforeAll(async () => {
    database = await createEmptyDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it("apply on an empty database and create every table", async () => {
    const output = await migrate(database.url);
    expect(output).toContain("All migrations have been successfully applied");
    const tables = await withAdminClient(database.url, async (client) => {
      const result = await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
      );
      return result.rows.map((row) => row.table_name);
    });
    expect(tables).toEqual([
      "_prisma_migrations",
      "alert_channel",
      "alert_delivery",
      "alert_notification",
      "alert_policy",
      "alerting_state",
      "api_key",
      "app",
      "app_instance",
      "app_version",
      "audit_log",
      "desired_app_removal",
      "enrollment_token",
      "membership",
      "network_probe",
      "node",
      "node_status_event",
      "organization",
      "push_action_use",
      "push_subscription",
      "rollout",
      "rollout_event",
      "rollout_gate_verdict",
      "rollout_node",
      "rollout_site_uplink",
      "site",
      "site_leaf_credential",
      "user",
    ]);
  });

  it("are a no-op when applied again", async () => {
    const before = await schemaFingerprint(database.url);
    const output = await migrate(database.url);
    expect(output).toContain("No pending migrations to apply");
    expect(await schemaFingerprint(database.url)).toEqual(before);
  });

  it("every tenant-owned table has an index leading with organization_id", async () => {
    const missing = await withAdminClient(database.url, async (client) => {
      const result = await client.query<{ table_name: string }>(`
        SELECT c.table_name FROM information_schema.columns c
        WHERE c.table_schema = 'public' AND c.column_name = 'organization_id'
          AND NOT EXISTS (
            SELECT 1 FROM pg_index i
            JOIN pg_class t ON t.oid = i.indrelid
            JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = i.indkey[0]
            WHERE t.relname = c.table_name AND a.attname = 'organization_id')`);
      return result.rows.map((row) => row.table_name);
    });
    expect(missing).toEqual([]);
  });

  it("match prisma/schema.prisma exactly (no un-migrated schema change)", async () => {
    // exit code 0 = no difference, 2 = schema.prisma has changes that no migration contains
    const result = await run(
      "pnpm",
      [
        "exec",
        "prisma",
        "migrate",
        "diff",
        "--from-migrations",
        "prisma/migrations",
        "--to-schema-datamodel",
        "prisma/schema.prisma",
        "--exit-code",
      ],
      { cwd: join(import.meta.dirname, ".."), env: { ...process.env, DATABASE_URL: database.url } },
    ).then(
      (ok) => ({ code: 0, output: ok.stdout }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({
        code: error.code,
        output: `${error.stdout}${error.stderr}`,
      }),
    );
    expect(result, result.output).toMatchObject({ code: 0 });
  });
});

async function schemaFingerprint(databaseUrl: string) {
  return withAdminClient(databaseUrl, async (client) => {
    const columns = await client.query(
      "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2",
    );
    const indexes = await client.query(
      "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1",
    );
    const migrations = await client.query(
      "SELECT migration_name, checksum FROM _prisma_migrations ORDER BY 1",
    );
    return { columns: columns.rows, indexes: indexes.rows, migrations: migrations.rows };
  });
}
