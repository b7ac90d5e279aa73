// `pnpm --filter @edgefleet/db db:seed [--live]`: loads the demo data into DATABASE_URL
// (idempotent). `--live`: live hollow agents will run the demo nodes (./edgefleet up, dev profile),
// so node statuses and instances are left to them.
import { createPrismaClient } from "../src/client";
import { requireDatabaseUrl } from "../src/connection";
import { seedDemoData } from "../src/seed";

const liveFleet = process.argv.slice(2).includes("--live");
const db = createPrismaClient(requireDatabaseUrl());
try {
  const summary = await seedDemoData(db, { liveFleet });
  console.log(
    `seeded ${summary.organizations} organizations, ${summary.users} users, ${summary.sites} sites, ${summary.nodes} nodes, ${summary.appInstances} app instances${liveFleet ? " (live fleet)" : ""}`,
  );
} finally {
  await db.$disconnect();
}
