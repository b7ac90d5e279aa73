// `pnpm --filter @edgefleet/db db:seed`: loads the demo data into DATABASE_URL (idempotent).
import { createPrismaClient } from "../src/client";
import { requireDatabaseUrl } from "../src/connection";
import { seedDemoData } from "../src/seed";

const db = createPrismaClient(requireDatabaseUrl());
try {
  const summary = await seedDemoData(db);
  console.log(
    `seeded ${summary.organizations} organizations, ${summary.users} users, ${summary.sites} sites, ${summary.nodes} nodes, ${summary.appInstances} app instances`,
  );
} finally {
  await db.$disconnect();
}
