// pnpm --filter @edgefleet/gateway demo-tokens <org-slug>=<count> ...
// For the local demo (`./edgefleet up`): clears the previous run's simulated nodes of each
// demo organization and prints one fresh enrollment token per organization, as lines of
// `<slug> <count> <token>`, for hollow agents to enroll with. Never used in production.
import { createEnrollmentToken, createPrismaClient } from "@edgefleet/db";
import { loadGatewayEnvOrExit } from "../env.js";

/** Label on every simulated node, so a later run can find and replace them. */
const SIMULATED_LABEL = { simulated: "true" };

const requests = process.argv.slice(2).map((argument) => {
  const [slug, count] = argument.split("=");
  if (!slug || !count || !/^\d+$/.test(count)) {
    process.stderr.write("usage: demo-tokens <org-slug>=<count> ...\n");
    process.exit(2);
  }
  return { slug, count: Number(count) };
});

const env = loadGatewayEnvOrExit();
const db = createPrismaClient(env.DATABASE_URL);
try {
  for (const { slug, count } of requests) {
    const organization = await db.organization.findUnique({ where: { slug } });
    if (!organization) throw new Error(`no organization "${slug}" (is the database seeded?)`);
    // Hollow agents keep their credentials in memory: last run's nodes can never come back.
    await db.node.deleteMany({
      where: { organizationId: organization.id, labels: { path: ["simulated"], equals: "true" } },
    });
    const { token } = await createEnrollmentToken(db, organization.id, {
      expiresAt: new Date(Date.now() + 3_600_000),
      maxUses: count,
      labels: SIMULATED_LABEL,
      description: "local demo: simulated fleet",
    });
    process.stdout.write(`${slug} ${count} ${token}\n`);
  }
} catch (error) {
  process.stderr.write(`demo-tokens: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await db.$disconnect();
}
