/**
 * tRPC set-up for the Edgefleet API: context, error shape and the three procedure tiers.
 *
 * Tenancy rule: tenant data is only reachable through `organizationProcedure`, which is the ONE
 * place that checks membership of the active organization against the database. Routers below
 * it receive `ctx.tenantDb`, a Prisma client that scopes every query on tenant models to that
 * organization, so a router cannot forget the `organizationId` filter.
 */
import { type Db, type Role, tenantDb } from "@edgefleet/db";
import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { ZodError, z } from "zod";

/** One organization the signed-in user belongs to, as known at sign-in time. */
export interface SessionMembership {
  organizationId: string;
  slug: string;
  name: string;
  role: Role;
}

/** What the API needs to know about the signed-in user; the web app builds it from Auth.js. */
export interface ApiSession {
  userId: string;
  email: string;
  memberships: SessionMembership[];
}

export interface CreateContextOptions {
  db: Db;
  /** null when nobody is signed in. */
  session: ApiSession | null;
  /** Slug the client asked to work in (the web app keeps it in a cookie). Not trusted: checked per request. */
  activeOrganizationSlug: string | null;
}

/**
 * Builds the per-request context. Transport-agnostic on purpose: the Next.js handler, server
 * components and tests all call it with plain values.
 */
export function createTRPCContext(opts: CreateContextOptions) {
  return {
    db: opts.db,
    session: opts.session,
    activeOrganizationSlug: opts.activeOrganizationSlug,
  };
}

export type TRPCContext = ReturnType<typeof createTRPCContext>;

const t = initTRPC.context<TRPCContext>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    // Input errors carry the per-field messages so forms can show them next to the field.
    const zodError = error.cause instanceof ZodError ? z.flattenError(error.cause) : null;
    return { ...shape, data: { ...shape.data, zodError } };
  },
});

export const createCallerFactory = t.createCallerFactory;
export const createTRPCRouter = t.router;

/** No session required. Keep to things that reveal nothing about any tenant. */
export const publicProcedure = t.procedure;

/** Signed in. `ctx.session` is non-null below this point. */
export const protectedProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.session) {
    throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in first" });
  }
  return next({ ctx: { ...ctx, session: ctx.session } });
});

/**
 * Signed in AND a member of the active organization. Membership is read from the database on
 * every call (not from the session, which may be stale after a membership is withdrawn).
 * A non-member gets NOT_FOUND, the same answer as for an organization that does not exist,
 * so the API does not reveal which organizations exist.
 */
export const organizationProcedure = protectedProcedure.use(async ({ ctx, next }) => {
  const slug = ctx.activeOrganizationSlug;
  if (!slug) {
    throw new TRPCError({ code: "BAD_REQUEST", message: "no active organization selected" });
  }
  const membership = await ctx.db.membership.findFirst({
    where: { userId: ctx.session.userId, organization: { slug } },
    select: { role: true, organization: { select: { id: true, slug: true, name: true } } },
  });
  if (!membership) {
    throw new TRPCError({
      code: "NOT_FOUND",
      message: `organization "${slug}" not found, or you are not a member of it`,
    });
  }
  const organization = { ...membership.organization, role: membership.role };
  return next({
    ctx: { ...ctx, organization, tenantDb: tenantDb(ctx.db, organization.id) },
  });
});
