/**
 * Makes an organization for one acceptance run in the stack's database (DATABASE_URL): an owner,
 * an owner API key for the provider, and two nodes (nodes enroll themselves; Terraform never
 * creates them) for the node data sources and edgefleet_node_labels. Prints shell assignments.
 * Like the REST fuzzer, the run touches nobody else's data.
 */
import { randomBytes } from "node:crypto";
import { createCaller, createTRPCContext } from "@edgefleet/api";
import { createPrismaClient } from "@edgefleet/db";

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error("DATABASE_URL must be set: source var/<profile>/stack.env");
const db = createPrismaClient(databaseUrl, { log: ["error"] });
try {
  const slug = `tf-${randomBytes(4).toString("hex")}`;
  const organization = await db.organization.create({ data: { slug, name: `Terraform ${slug}` } });
  const user = await db.user.create({ data: { email: `${slug}@terraform.example`, keycloakSubject: `kc-${slug}` } });
  await db.membership.create({ data: { organizationId: organization.id, userId: user.id, role: "owner" } });
  const owner = createCaller(
    createTRPCContext({
      db,
      session: {
        userId: user.id,
        email: user.email,
        memberships: [{ organizationId: organization.id, slug, name: organization.name, role: "owner" }],
      },
      activeOrganizationSlug: slug,
    }),
  );
  const key = await owner.apiKey.create({ name: "terraform acceptance", role: "owner" });
  const viewer = await owner.apiKey.create({ name: "terraform acceptance viewer", role: "viewer" });
  const nodes = [];
  for (const [name, tier] of [
    ["tf-node-a", "canary"],
    ["tf-node-b", "stable"],
  ] as const) {
    nodes.push(
      await db.node.create({
        data: { organizationId: organization.id, name, status: "online", labels: { tier, fleet: "tf" } },
      }),
    );
  }
  const assignments = {
    EDGEFLEET_API_KEY: key.key,
    EDGEFLEET_TEST_VIEWER_KEY: viewer.key,
    EDGEFLEET_TEST_ORGANIZATION: slug,
    EDGEFLEET_TEST_NODE_ID: nodes[0]?.id ?? "",
    EDGEFLEET_TEST_OTHER_NODE_ID: nodes[1]?.id ?? "",
  };
  for (const [name, value] of Object.entries(assignments)) console.log(`export ${name}=${value}`);
} finally {
  await db.$disconnect();
}
