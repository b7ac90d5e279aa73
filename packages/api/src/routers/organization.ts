import { z } from "zod";
import { listOrganizationsOfUser, myOrganization } from "../domain/organizations";
import { createTRPCRouter, protectedProcedure } from "../trpc";

export const organizationRouter = createTRPCRouter({
  /** Organizations the signed-in user is a member of, for the organization switcher. */
  listMine: protectedProcedure
    .output(z.array(myOrganization))
    .query(({ ctx }) => listOrganizationsOfUser(ctx.db, ctx.session.userId)),
});
