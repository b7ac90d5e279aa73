/**
 * A fresh, migrated and seeded database per test file, created next to the one DATABASE_URL
 * names (which must exist: the stack's Postgres). Tests must not skip without it.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createPrismaClient, type Db, seedDemoData } from "@edgefleet/db";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export interface TestDatabase {
  url: string;
  db: Db;
  drop(): Promise<void>;
}

function requireDatabaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) {
    throw new Error(
      "DATABASE_URL is not set: these integration tests need the stack's Postgres (export var/test/stack.env)",
    );
  }
  return url;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = requireDatabaseUrl();
  const name = `api_test_${Date.now()}_${randomBytes(3).toString("hex")}`;
  const admin = createPrismaClient(adminUrl);
  await admin.$executeRawUnsafe(`CREATE DATABASE "${name}"`);

  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  execFileSync("pnpm", ["--filter", "@edgefleet/db", "db:migrate"], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: url.toString() },
    stdio: "pipe",
  });

  const db = createPrismaClient(url.toString());
  await seedDemoData(db);
  return {
    url: url.toString(),
    db,
    async drop() {
      await db.$disconnect();
      await admin.$executeRawUnsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.$disconnect();
    },
  };
}
