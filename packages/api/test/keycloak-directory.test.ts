/**
 * Invitations against the stack's real Keycloak (AUTH_KEYCLOAK_* from stack.env): the person gets
 * an account with a one-time password and joins the Keycloak organization; removal takes them out;
 * when Keycloak refuses, the invitation fails and nothing is left in the database.
 */
import type { Db, Role } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { createCaller, createTRPCContext } from "../src";
import { type IdentityDirectory, keycloakDirectory } from "../src/keycloak-directory";
import { membersByRole, ORG } from "./actors";
import { createTestDatabase, type TestDatabase } from "./test-database";

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: source var/<profile>/stack.env`);
  return value;
}

const config = {
  issuer: requireEnv("AUTH_KEYCLOAK_ISSUER"),
  clientId: requireEnv("AUTH_KEYCLOAK_ID"),
  clientSecret: requireEnv("AUTH_KEYCLOAK_SECRET"),
};

/** Reads Keycloak as the same service account, to check what the directory did. */
async function keycloakAdmin(path: string, init: RequestInit = {}): Promise<Response> {
  const [root, realm] = config.issuer.split("/realms/");
  const tokenResponse = await fetch(`${config.issuer}/protocol/openid-connect/token`, {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: config.clientId,
      client_secret: config.clientSecret,
    }),
  });
  const { access_token } = (await tokenResponse.json()) as { access_token: string };
  return fetch(`${root}/admin/realms/${realm}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${access_token}`, ...init.headers },
  });
}

async function keycloakUser(email: string): Promise<{ id: string; requiredActions: string[] } | null> {
  const users = (await (
    await keycloakAdmin(`/users?email=${encodeURIComponent(email)}&exact=true`)
  ).json()) as Array<{ id: string; requiredActions: string[] }>;
  return users[0] ?? null;
}

async function organizationsOf(userId: string): Promise<string[]> {
  const organizations = (await (
    await keycloakAdmin(`/organizations/members/${userId}/organizations`)
  ).json()) as Array<{
    alias: string;
  }>;
  return organizations.map((o) => o.alias);
}

/** The one-time password signs in (Keycloak then requires a new one: the grant says so). */
async function passwordAccepted(email: string, password: string): Promise<string> {
  const response = await fetch(`${config.issuer}/protocol/openid-connect/token`, {
    method: "POST",
    body: new URLSearchParams({ grant_type: "password", client_id: "admin-cli", username: email, password }),
  });
  return ((await response.json()) as { error_description?: string }).error_description ?? "";
}

let testDb: TestDatabase;
let db: Db;
let members: Record<Role, ApiSession>;
const directory = keycloakDirectory(config);
const created: string[] = [];

function ownerWith(identityDirectory: IdentityDirectory) {
  return createCaller(
    createTRPCContext({ db, session: members.owner, activeOrganizationSlug: ORG, identityDirectory }),
  );
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  members = await membersByRole(db);
});

afterAll(async () => {
  for (const email of created) {
    const user = await keycloakUser(email);
    if (user) await keycloakAdmin(`/users/${user.id}`, { method: "DELETE" });
  }
  await testDb?.drop();
});

describe("the Keycloak directory", () => {
  it("invites a new person: account with a one-time password, member of the Keycloak organization", async () => {
    const email = `invited-${Date.now()}@acme.example`;
    created.push(email);
    const invited = await ownerWith(directory).member.invite({ email, role: "operator" });
    expect(invited).toMatchObject({ email, role: "operator", pending: true });
    expect(invited.handover).toMatchObject({ accountCreated: true, temporaryPassword: expect.any(String) });

    const user = await keycloakUser(email);
    expect(user?.requiredActions).toEqual(["UPDATE_PASSWORD"]);
    expect(await organizationsOf(user?.id ?? "")).toEqual([ORG]);
    // The password works and Keycloak insists on a new one.
    expect(await passwordAccepted(email, invited.handover?.temporaryPassword ?? "")).toMatch(
      /not fully set up/i,
    );
    // The password never reaches the audit log.
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "member.invite", targetId: invited.userId },
    });
    expect(JSON.stringify(audit)).not.toContain(invited.handover?.temporaryPassword);

    // Removing takes them out of the Keycloak organization (else their next sign-in would re-add them).
    await ownerWith(directory).member.remove({ userId: invited.userId });
    expect(await organizationsOf(user?.id ?? "")).toEqual([]);
  });

  it("an existing account is only added to the organization: no password to hand over", async () => {
    const again = await directory.addMember(ORG, "alice@acme.example");
    expect(again).toEqual({ accountCreated: false, temporaryPassword: null });
  });

  it("when Keycloak refuses, the invitation fails with SERVICE_UNAVAILABLE and leaves nothing behind", async () => {
    const email = `refused-${Date.now()}@acme.example`;
    const wrongSecret = keycloakDirectory({ ...config, clientSecret: "not-the-secret" });
    await expect(ownerWith(wrongSecret).member.invite({ email, role: "viewer" })).rejects.toMatchObject({
      code: "SERVICE_UNAVAILABLE",
      message: expect.stringContaining("nothing was changed"),
    });
    expect(await db.user.findUnique({ where: { email } })).toBeNull();
    expect(await keycloakUser(email)).toBeNull();
  });

  it("an organization Keycloak does not know is a clear error", async () => {
    await expect(directory.addMember("no-such-organization", "x@acme.example")).rejects.toThrow(
      'Keycloak has no organization with alias "no-such-organization"',
    );
  });
});
