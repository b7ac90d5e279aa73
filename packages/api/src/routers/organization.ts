import { z } from "zod";
import { currentOrganization, listOrganizationsOfUser, myOrganization } from "../domain/organizations";
import { createTRPCRouter, organizationProcedure, protectedProcedure } from "../trpc";

export const organizationRouter = createTRPCRouter({
  /** Organizations the signed-in user is a member of, for the organization switcher. */
  listMine: protectedProcedure
    .output(z.array(myOrganization))
    .query(({ ctx }) => listOrganizationsOfUser(ctx.db, ctx.session.userId)),

  /** The organization the caller works in (an API key's own) and the caller's role there. */
  current: organizationProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/organization",
        tags: ["Organization"],
        summary: "The key's organization and role",
      },
    })
    .output(myOrganization)
    .query(({ ctx }) => currentOrganization(ctx.organization)),
});
