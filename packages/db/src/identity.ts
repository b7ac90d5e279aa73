import { z } from "zod";
import type { Db } from "./client";
import { Prisma, type Role } from "./generated/prisma/client";

/** Keycloak organization aliases we accept as organization slugs. */
const ORGANIZATION_SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

const identityInput = z.object({
  subject: z.string().trim().min(1, "subject (the OIDC `sub`) is required").max(255),
  email: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.email({ message: "email must be a valid e-mail address" })),
  name: z.string().trim().max(200).nullish(),
  organizationSlugs: z.array(
    z
      .string()
      .regex(
        ORGANIZATION_SLUG,
        "organization alias must be 1-63 characters: letters, digits, '.', '_' or '-', starting with a letter or digit",
      ),
  ),
});

export type IdentityInput = z.input<typeof identityInput>;

export interface OrganizationMembership {
  organizationId: string;
  slug: string;
  name: string;
  role: Role;
}

/** The identity's e-mail already belongs to a user linked to a different subject. */
export class IdentityConflictError extends Error {
  override name = "IdentityConflictError";
}

/**
 * Brings the database in line with a signed-in identity (Keycloak is the source of truth):
 * - finds the user by subject; if unknown, links a pre-created user with the same e-mail
 *   (only one whose subject is still null), else creates the user; e-mail and name follow the token;
 * - creates organizations missing for the claimed slugs (slug = name = Keycloak alias);
 * - creates missing memberships: "owner" if the organization has no members yet, else "viewer";
 *   existing roles are kept;
 * - returns the memberships of the claimed organizations only, in claim order.
 *
 * The caller must pass an e-mail the identity provider has verified: linking by e-mail trusts it.
 * Safe under concurrent first sign-ins (organization rows are locked while memberships are added).
 */
export async function syncUserFromIdentity(db: Db, input: IdentityInput): Promise<OrganizationMembership[]> {
  const parsed = identityInput.safeParse(input);
  if (!parsed.success) {
    throw new Error(`invalid identity: ${parsed.error.issues.map((issue) => issue.message).join("; ")}`);
  }
  const { subject, email, name, organizationSlugs } = parsed.data;
  const slugs = [...new Set(organizationSlugs)];

  // Two first sign-ins of the same new user race on the unique subject/e-mail; the loser retries
  // once and then finds the row the winner created.
  try {
    return await syncInTransaction(db, { subject, email, name: name ?? null }, slugs);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return syncInTransaction(db, { subject, email, name: name ?? null }, slugs);
  }
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002";
}

async function syncInTransaction(
  db: Db,
  identity: { subject: string; email: string; name: string | null },
  slugs: string[],
): Promise<OrganizationMembership[]> {
  return db.$transaction(async (tx) => {
    const userId = await upsertUser(tx, identity);
    if (slugs.length === 0) return [];

    await tx.organization.createMany({
      data: slugs.map((slug) => ({ slug, name: slug })),
      skipDuplicates: true,
    });
    const organizations = await tx.organization.findMany({ where: { slug: { in: slugs } } });
    // Serialise membership creation per organization so two first sign-ins cannot both become owner.
    await tx.$queryRaw`SELECT id FROM "organization" WHERE id = ANY(${organizations.map((o) => o.id)}::uuid[]) ORDER BY id FOR UPDATE`;

    const memberships: OrganizationMembership[] = [];
    for (const slug of slugs) {
      const organization = organizations.find((o) => o.slug === slug);
      if (!organization) throw new Error(`organization ${slug} vanished during sign-in`);
      const existing = await tx.membership.findUnique({
        where: { organizationId_userId: { organizationId: organization.id, userId } },
      });
      let role = existing?.role;
      if (!role) {
        const hasMembers = (await tx.membership.count({ where: { organizationId: organization.id } })) > 0;
        role = hasMembers ? "viewer" : "owner";
        await tx.membership.create({ data: { organizationId: organization.id, userId, role } });
      }
      memberships.push({ organizationId: organization.id, slug, name: organization.name, role });
    }
    return memberships;
  });
}

type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

async function upsertUser(
  tx: Tx,
  identity: { subject: string; email: string; name: string | null },
): Promise<string> {
  const bySubject = await tx.user.findUnique({ where: { keycloakSubject: identity.subject } });
  const byEmail = await tx.user.findUnique({ where: { email: identity.email } });

  if (bySubject) {
    if (byEmail && byEmail.id !== bySubject.id) {
      throw new IdentityConflictError(
        `e-mail ${identity.email} already belongs to another user; cannot move it to subject ${identity.subject}`,
      );
    }
    await tx.user.update({
      where: { id: bySubject.id },
      data: { email: identity.email, name: identity.name ?? bySubject.name },
    });
    return bySubject.id;
  }
  if (byEmail) {
    if (byEmail.keycloakSubject !== null) {
      throw new IdentityConflictError(
        `e-mail ${identity.email} is already linked to a different identity; an administrator must resolve it`,
      );
    }
    await tx.user.update({
      where: { id: byEmail.id },
      data: { keycloakSubject: identity.subject, name: identity.name ?? byEmail.name },
    });
    return byEmail.id;
  }
  const created = await tx.user.create({
    data: { keycloakSubject: identity.subject, email: identity.email, name: identity.name },
  });
  return created.id;
}
