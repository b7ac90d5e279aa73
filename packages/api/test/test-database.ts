/**
 * A fresh, migrated and seeded database per test file (see @edgefleet/db/testing), so the
 * router tests see the demo organizations without touching the stack's own data.
 */
import { seedDemoData } from "@edgefleet/db";
import { createMigratedDatabase, type TestDatabase } from "@edgefleet/db/testing";

export type { TestDatabase };

export async function createTestDatabase(): Promise<TestDatabase> {
  const database = await createMigratedDatabase();
  await seedDemoData(database.db);
  return database;
}
