/**
 * Callers of every kind in the seeded "acme" organization: a member per role, a member of
 * another organization, nobody, and an API key per role.
 */
import type { Db, Role } from "@edgefleet/db";
import { type ApiSession, createCaller, createTRPCContext } from "../src";
import { ROLES } from "../src/domain/roles";
import { callerFor, sessionOf } from "./callers";

export const ORG = "acme";
export const OTHER_ORG = "globex";

/** Adds a member with this role to the organization and returns their session. */
export async function addMember(db: Db, slug: string, role: Role, email: string): Promise<ApiSession> {
  const organization = await db.organization.findUniqueOrThrow({ where: { slug } });
  const user = await db.user.create({ data: { email, keycloakSubject: `kc-${email}` } });
  await db.membership.create({ data: { organizationId: organization.id, userId: user.id, role } });
  return sessionOf(db, email);
}

/** Sessions of one member per role in `ORG`; the owner is the seeded alice. */
export async function membersByRole(db: Db): Promise<Record<Role, ApiSession>> {
  return {
    owner: await sessionOf(db, "alice@acme.example"),
    admin: await addMember(db, ORG, "admin", "adam@acme.example"),
    operator: await addMember(db, ORG, "operator", "olga@acme.example"),
    viewer: await addMember(db, ORG, "viewer", "vera@acme.example"),
  };
}

/** One API key per role in the session's organization, created through the API by that owner. */
export async function apiKeysByRole(db: Db, owner: ApiSession, slug: string): Promise<Record<Role, string>> {
  const caller = callerFor(db, owner, slug);
  const keys = {} as Record<Role, string>;
  for (const role of ROLES) {
    keys[role] = (await caller.apiKey.create({ name: `${slug}-${role}-key`, role })).key;
  }
  return keys;
}

export function keyCaller(db: Db, key: string) {
  return createCaller(
    createTRPCContext({
      db,
      session: null,
      activeOrganizationSlug: null,
      authorization: `Bearer ${key}`,
      // As the REST route does: API keys read the organization's Mimir too (alerts, metrics).
      mimirUrl: process.env.MIMIR_URL ?? null,
    }),
  );
}
