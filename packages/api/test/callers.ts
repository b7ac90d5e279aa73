import type { Db } from "@edgefleet/db";
import { type ApiSession, createCaller, createTRPCContext } from "../src";

/** Session of a seeded user, the way the web app builds it after a Keycloak sign-in. */
export async function sessionOf(db: Db, email: string): Promise<ApiSession> {
  const user = await db.user.findUniqueOrThrow({
    where: { email },
    include: { memberships: { include: { organization: true } } },
  });
  return {
    userId: user.id,
    email: user.email,
    memberships: user.memberships.map((m) => ({
      organizationId: m.organizationId,
      slug: m.organization.slug,
      name: m.organization.name,
      role: m.role,
    })),
  };
}

export function callerFor(db: Db, session: ApiSession | null, activeOrganizationSlug: string | null) {
  return createCaller(
    createTRPCContext({ db, session, activeOrganizationSlug, mimirUrl: process.env.MIMIR_URL ?? null }),
  );
}
