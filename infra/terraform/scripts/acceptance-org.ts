/**
 * Makes an organization for one acceptance run in the stack's database (DATABASE_URL): an owner,
 * an owner API key for the provider, and nodes (nodes enroll themselves; Terraform never creates
 * them) for the node data sources and edgefleet_node_labels; and a site of a second organization,
 * which must read as absent (alert policy scope). Prints shell assignments.
 * Like the REST fuzzer, the run touches nobody else's data.
 */
import { randomBytes } from "node:crypto";
import { createCaller, createTRPCContext } from "@edgefleet/api";
import { createPrismaClient } from "@edgefleet/db";

/**
 * Members live in Keycloak too: the organization gets its Keycloak twin, made with the console's
 * own service account (it may manage organizations), so edgefleet_member is tested for real.
 */
async function createKeycloakOrganization(slug: string): Promise<void> {
  const issuer = process.env.AUTH_KEYCLOAK_ISSUER;
  const clientId = process.env.AUTH_KEYCLOAK_ID;
  const clientSecret = process.env.AUTH_KEYCLOAK_SECRET;
  if (!issuer || !clientId || !clientSecret) throw new Error("AUTH_KEYCLOAK_* must be set: source stack.env");
  const tokenResponse = await fetch(`${issuer}/protocol/openid-connect/token`, {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: clientId,
      client_secret: clientSecret,
    }),
  });
  if (!tokenResponse.ok)
    throw new Error(`Keycloak token: ${tokenResponse.status} ${await tokenResponse.text()}`);
  const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
  const adminUrl = issuer.replace("/realms/", "/admin/realms/");
  const created = await fetch(`${adminUrl}/organizations`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `Terraform ${slug}`, alias: slug, domains: [{ name: `${slug}.example` }] }),
  });
  if (!created.ok) throw new Error(`Keycloak organization: ${created.status} ${await created.text()}`);
}

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error("DATABASE_URL must be set: source var/<profile>/stack.env");
const db = createPrismaClient(databaseUrl, { log: ["error"] });
try {
  const slug = `tf-${randomBytes(4).toString("hex")}`;
  await createKeycloakOrganization(slug);
  const organization = await db.organization.create({ data: { slug, name: `Terraform ${slug}` } });
  const user = await db.user.create({
    data: { email: `${slug}@terraform.example`, keycloakSubject: `kc-${slug}` },
  });
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
  for (const [name, status, labels] of [
    ["tf-node-a", "online", { tier: "canary", fleet: "tf" }],
    ["tf-node-b", "online", { tier: "stable", fleet: "tf" }],
    // Offline: a rollout skips it (offline: skip), so rollouts can complete without an agent.
    ["tf-node-offline", "offline", { fleet: "tf-offline" }],
  ] as const) {
    nodes.push(await db.node.create({ data: { organizationId: organization.id, name, status, labels } }));
  }
  // Another organization's site: a policy scoped to it must be refused as not found.
  const foreign = await db.organization.create({
    data: { slug: `${slug}-foreign`, name: `Terraform ${slug} (foreign)` },
  });
  const foreignSite = await db.site.create({ data: { organizationId: foreign.id, name: "foreign-plant" } });
  const assignments = {
    EDGEFLEET_API_KEY: key.key,
    EDGEFLEET_TEST_VIEWER_KEY: viewer.key,
    EDGEFLEET_TEST_ORGANIZATION: slug,
    EDGEFLEET_TEST_NODE_ID: nodes[0]?.id ?? "",
    EDGEFLEET_TEST_OTHER_NODE_ID: nodes[1]?.id ?? "",
    EDGEFLEET_TEST_FOREIGN_SITE_ID: foreignSite.id,
  };
  for (const [name, value] of Object.entries(assignments)) console.log(`export ${name}=${value}`);
} finally {
  await db.$disconnect();
}
