import {
  getMember,
  invitedMember,
  inviteMember,
  inviteMemberInput,
  listMembers,
  listMembersOutput,
  memberIdInput,
  memberSummary,
  removeMember,
  removeMemberInput,
  updateMemberRole,
  updateMemberRoleInput,
} from "../domain/members";
import { createTRPCRouter, organizationProcedure } from "../trpc";

const tags = ["Members"];

// Membership rows are written with the base client inside transactions that lock the
// organization row (last-owner rule); every query filters on ctx.organization.id.
export const memberRouter = createTRPCRouter({
  list: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/members", tags, summary: "List members" } })
    .output(listMembersOutput)
    .query(({ ctx }) => listMembers(ctx.db, ctx.organization.id, ctx.actor)),

  /**
   * Creates a pending membership and the Keycloak organization membership (and account, whose
   * one-time password the response hands over once); the first sign-in activates it.
   */
  invite: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "member.invite", target: "member" },
      openapi: { method: "POST", path: "/members", tags, summary: "Invite a member by e-mail" },
    })
    .input(inviteMemberInput)
    .output(invitedMember)
    .mutation(async ({ ctx, input }) => {
      const { member, handover } = await inviteMember(
        ctx.db,
        ctx.organization,
        ctx.actor,
        input,
        ctx.identityDirectory,
      );
      ctx.audit.record({ targetId: member.userId, before: null, after: member });
      return { ...member, handover };
    }),

  updateRole: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "member.updateRole", target: "member" },
      openapi: { method: "POST", path: "/members/{userId}/role", tags, summary: "Change a member's role" },
    })
    .input(updateMemberRoleInput)
    .output(memberSummary)
    .mutation(async ({ ctx, input }) => {
      const { before, after } = await updateMemberRole(ctx.db, ctx.organization.id, ctx.actor, input);
      ctx.audit.record({ targetId: input.userId, before, after });
      return after;
    }),

  remove: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "member.remove", target: "member" },
      openapi: { method: "DELETE", path: "/members/{userId}", tags, summary: "Remove a member" },
    })
    .input(removeMemberInput)
    .output(memberSummary)
    .mutation(async ({ ctx, input }) => {
      const before = await removeMember(ctx.db, ctx.organization, ctx.actor, input, ctx.identityDirectory);
      ctx.audit.record({ targetId: input.userId, before, after: null });
      return before;
    }),

  // Declared last: the REST contract test calls operations in document order (role change before removal).
  byId: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/members/{userId}", tags, summary: "Get a member" } })
    .input(memberIdInput)
    .output(memberSummary)
    .query(({ ctx, input }) => getMember(ctx.db, ctx.organization.id, input.userId)),
});
