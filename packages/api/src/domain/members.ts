/**
 * Members of an organization: list, invite by e-mail, change role, remove.
 * Rules: only an owner grants, changes or removes the owner role; an organization always keeps
 * at least one owner (changes are serialized per organization by locking its row).
 * An invitation creates the user (unlinked: keycloakSubject null) and the membership, and makes
 * the person a member of the Keycloak organization (creating their Keycloak account with a
 * one-time password when they have none: there is no mail server, the inviter hands it over);
 * their first sign-in with that e-mail links them. Removing also takes them out of the Keycloak
 * organization, or their next sign-in would bring the membership back. Without a directory (tests,
 * tools) only the database side happens.
 */
import type { Db, Role } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { type IdentityDirectory, IdentityDirectoryError } from "../keycloak-directory";
import {
  inviteMemberInput,
  memberIdInput,
  removeMemberInput,
  updateMemberRoleInput,
} from "../schemas/members";
import { type Actor, roleAtLeast, roleSchema } from "./roles";

// Input schemas live in ../schemas (zod only) so the console can validate with them too.
export { inviteMemberInput, memberIdInput, removeMemberInput, updateMemberRoleInput };

type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

export const memberSummary = z.object({
  userId: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  role: roleSchema,
  /** True until the person signs in for the first time. */
  pending: z.boolean(),
  joinedAt: z.date(),
});
export type MemberSummary = z.infer<typeof memberSummary>;

export const listMembersOutput = z.object({
  items: z.array(memberSummary),
  /** Who is asking and with which role, so a console can show what they may do (the server still checks). */
  caller: z.object({ type: z.enum(["user", "apiKey"]), id: z.string(), role: roleSchema }),
});

const memberSelect = {
  role: true,
  createdAt: true,
  user: { select: { id: true, email: true, name: true, keycloakSubject: true } },
} as const;

function toSummary(row: {
  role: Role;
  createdAt: Date;
  user: { id: string; email: string; name: string | null; keycloakSubject: string | null };
}): MemberSummary {
  return {
    userId: row.user.id,
    email: row.user.email,
    name: row.user.name,
    role: row.role,
    pending: row.user.keycloakSubject === null,
    joinedAt: row.createdAt,
  };
}

export async function listMembers(
  db: Db,
  organizationId: string,
  caller: Actor,
): Promise<z.infer<typeof listMembersOutput>> {
  const rows = await db.membership.findMany({
    where: { organizationId },
    select: memberSelect,
    orderBy: { user: { email: "asc" } },
  });
  return { items: rows.map(toSummary), caller: { type: caller.type, id: caller.id, role: caller.role } };
}

/** One member of the organization by user id; NOT_FOUND for anyone else. */
export async function getMember(db: Db, organizationId: string, userId: string): Promise<MemberSummary> {
  const row = await db.membership.findFirst({ where: { organizationId, userId }, select: memberSelect });
  if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `member ${userId} not found` });
  return toSummary(row);
}

/** What the inviter hands over so the person can sign in. Not audited (it holds a password). */
export const invitationHandover = z.object({
  /** A Keycloak account was made for the person. */
  accountCreated: z.boolean(),
  /** One-time password of that new account (Keycloak asks for a new one at first sign-in); null otherwise. */
  temporaryPassword: z.string().nullable(),
});
export const invitedMember = memberSummary.extend({
  /** null when the server has no identity directory configured (the person must be added in Keycloak). */
  handover: invitationHandover.nullable(),
});

/** Runs a directory call; its failure fails the mutation, whose transaction then undoes the database side. */
async function inDirectory<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof IdentityDirectoryError)) throw error;
    throw new TRPCError({
      code: "SERVICE_UNAVAILABLE",
      message: `the identity provider could not be updated, nothing was changed: ${error.message}`,
      cause: error,
    });
  }
}

function assertMayGrant(actor: Actor, role: Role): void {
  if (role === "owner" && actor.role !== "owner") {
    throw new TRPCError({ code: "FORBIDDEN", message: "only an owner can grant or change the owner role" });
  }
  if (!roleAtLeast(actor.role, role)) {
    throw new TRPCError({ code: "FORBIDDEN", message: `you are ${actor.role} and cannot grant ${role}` });
  }
}

/** Locks the organization row: concurrent role changes cannot both remove "the other" last owner. */
async function lockOrganization(tx: Tx, organizationId: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM "organization" WHERE id = ${organizationId}::uuid FOR UPDATE`;
}

async function findMember(tx: Tx, organizationId: string, userId: string) {
  const row = await tx.membership.findUnique({
    where: { organizationId_userId: { organizationId, userId } },
    select: memberSelect,
  });
  if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `member ${userId} not found` });
  return toSummary(row);
}

async function assertNotLastOwner(tx: Tx, organizationId: string, member: MemberSummary): Promise<void> {
  if (member.role !== "owner") return;
  const owners = await tx.membership.count({ where: { organizationId, role: "owner" } });
  if (owners <= 1) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: "an organization needs at least one owner: make someone else owner first",
    });
  }
}

export async function inviteMember(
  db: Db,
  organization: { id: string; slug: string },
  actor: Actor,
  input: z.output<typeof inviteMemberInput>,
  directory: IdentityDirectory | null,
): Promise<{ member: MemberSummary; handover: z.infer<typeof invitationHandover> | null }> {
  assertMayGrant(actor, input.role);
  const organizationId = organization.id;
  const member = await db.$transaction(async (tx) => {
    const user = await tx.user.upsert({
      where: { email: input.email },
      create: { email: input.email },
      update: {},
    });
    const existing = await tx.membership.findUnique({
      where: { organizationId_userId: { organizationId, userId: user.id } },
    });
    if (existing) throw new TRPCError({ code: "CONFLICT", message: `${input.email} is already a member` });
    await tx.membership.create({ data: { organizationId, userId: user.id, role: input.role } });
    return findMember(tx, organizationId, user.id);
  });
  const handover = directory
    ? await inDirectory(() => directory.addMember(organization.slug, input.email))
    : null;
  return { member, handover };
}

export async function updateMemberRole(
  db: Db,
  organizationId: string,
  actor: Actor,
  input: z.output<typeof updateMemberRoleInput>,
): Promise<{ before: MemberSummary; after: MemberSummary }> {
  return db.$transaction(async (tx) => {
    await lockOrganization(tx, organizationId);
    const before = await findMember(tx, organizationId, input.userId);
    if (before.role === input.role) return { before, after: before };
    // Changing an owner, or making one, is the owner's call; everyone else needs to outrank both roles.
    assertMayGrant(actor, before.role);
    assertMayGrant(actor, input.role);
    await assertNotLastOwner(tx, organizationId, before);
    await tx.membership.update({
      where: { organizationId_userId: { organizationId, userId: input.userId } },
      data: { role: input.role },
    });
    return { before, after: await findMember(tx, organizationId, input.userId) };
  });
}

export async function removeMember(
  db: Db,
  organization: { id: string; slug: string },
  actor: Actor,
  input: z.output<typeof removeMemberInput>,
  directory: IdentityDirectory | null,
): Promise<MemberSummary> {
  const organizationId = organization.id;
  const removed = await db.$transaction(async (tx) => {
    await lockOrganization(tx, organizationId);
    const before = await findMember(tx, organizationId, input.userId);
    assertMayGrant(actor, before.role);
    await assertNotLastOwner(tx, organizationId, before);
    await tx.membership.delete({
      where: { organizationId_userId: { organizationId, userId: input.userId } },
    });
    return before;
  });
  if (directory) await inDirectory(() => directory.removeMember(organization.slug, removed.email));
  return removed;
}
