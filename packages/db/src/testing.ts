// Test support for every package whose tests need a real, fresh Postgres database.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { createPrismaClient, type Db } from "./client";
import { connectionConfigFromUrl, requireDatabaseUrl } from "./connection";

const run = promisify(execFile);
const packageDir = join(import.meta.dirname, "..");

export interface TestDatabase {
  name: string;
  url: string;
  /** Created lazily by `connect()`; closed by `drop()`. */
  db: Db;
  drop(): Promise<void>;
}

/**
 * A fresh, empty database next to DATABASE_URL's (edgefleet_test_<random>), so tests never touch
 * the dev data and files can run in parallel. Fails when DATABASE_URL is unset.
 */
export async function createEmptyDatabase(): Promise<Omit<TestDatabase, "db">> {
  const serverUrl = requireDatabaseUrl();
  const name = `edgefleet_test_${randomBytes(6).toString("hex")}`;
  await withAdminClient(serverUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      await withAdminClient(serverUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
      );
    },
  };
}

/** An empty database with all migrations applied through `db:migrate`, and a client on it. */
export async function createMigratedDatabase(): Promise<TestDatabase> {
  const database = await createEmptyDatabase();
  await migrate(database.url);
  // errors are asserted by the tests; Prisma's own error log would only repeat them
  const db = createPrismaClient(database.url, { log: ["warn"] });
  return {
    ...database,
    db,
    drop: async () => {
      await db.$disconnect();
      await database.drop();
    },
  };
}

/** Runs `pnpm db:migrate` (prisma migrate deploy through the JS engine) against `databaseUrl`. */
export async function migrate(databaseUrl: string): Promise<string> {
  const { stdout, stderr } = await run("pnpm", ["--silent", "db:migrate"], {
    cwd: packageDir,
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  return `${stdout}${stderr}`;
}

export async function withAdminClient<T>(
  databaseUrl: string,
  action: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client(connectionConfigFromUrl(databaseUrl));
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}
