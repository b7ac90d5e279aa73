/**
 * tRPC set-up for the Edgefleet API: context, error shape, procedure tiers, and the ONE place
 * where authorization and auditing happen.
 *
 * Tenancy rule: tenant data is only reachable through `organizationProcedure`, which resolves the
 * caller (a signed-in person's membership, or an API key) against the database, checks the role
 * the procedure declares in its meta, and hands routers `ctx.tenantDb`, a Prisma client scoped to
 * that organization, so a router cannot forget the `organizationId` filter.
 *
 * Roles: `.meta({ role })` names the least role a procedure needs (owner > admin > operator >
 * viewer). Queries default to viewer; a mutation MUST declare its role and its audit action, and
 * one that does not is refused for everybody (fail closed). Every successful mutation writes one
 * audit row, here, after the handler returned, in the same transaction as the handler's writes
 * (`ctx.db` and `ctx.tenantDb` are that transaction's clients); a failed or refused one writes none.
 */

import type { OrgHistograms } from "@edgefleet/alerts";
import {
  type Db,
  type FleetChangeFeed,
  isDataException,
  isUnconvertibleArgument,
  type Role,
  tenantDb,
} from "@edgefleet/db";
import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import type { OpenApiMeta } from "trpc-to-openapi";
import { ZodError, z } from "zod";
import { type AuthenticatedApiKey, authenticateApiKey } from "./domain/api-keys";
import { type AuditChange, type AuditRecorder, createAuditRecorder, writeAuditRow } from "./domain/audit";
import { type Actor, roleAtLeast } from "./domain/roles";
import { type FairShare, RateLimited } from "./fair-share";
import type { GatewayConnection } from "./gateway-client";
import { internalErrorMessage, reportInternalError } from "./http-guards";
import type { IdentityDirectory } from "./keycloak-directory";
import { inMutationTransaction } from "./mutation-transaction";

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
  /** Raw `Authorization` header value; `Bearer efk_…` authenticates as that API key (REST clients). */
  authorization?: string | null;
  /** NATS URL agents should connect to, used in the install command of new enrollment tokens. */
  agentServerUrl?: string | null;
  /** Where nodes download the native agent and its systemd unit (the console's /downloads/agent). */
  agentDownloadUrl?: string | null;
  /** Mimir's base URL for the metrics procedures (tenant = the active organization). */
  mimirUrl?: string | null;
  /** The gateway's internal API: it alone holds the NATS secrets (site leaf bundles, enrollment credentials). */
  gateway?: GatewayConnection | null;
  /** "Fleet changed" signals for the live pages' subscriptions (one Postgres LISTEN per process). */
  fleetChanges?: FleetChangeFeed | null;
  /** Keycloak's side of membership (invite, remove); without it only the database changes. */
  identityDirectory?: IdentityDirectory | null;
  /** The API key of `authorization`, when the transport already authenticated it (REST does, before reading the body). */
  authenticatedKey?: AuthenticatedApiKey | null;
  /** Per-process rate limits and fair queuing across organizations (the web app passes its one instance). */
  fairShare?: FairShare | null;
  /** Where each organization's call latencies are recorded (the web app pushes them to Mimir: its SLO page). */
  apiLatency?: OrgHistograms | null;
}

/**
 * Builds the per-request context. Transport-agnostic on purpose: the Next.js handlers, server
 * components and tests all call it with plain values.
 */
export function createTRPCContext(opts: CreateContextOptions) {
  return {
    db: opts.db,
    session: opts.session,
    activeOrganizationSlug: opts.activeOrganizationSlug,
    authorization: opts.authorization ?? null,
    agentServerUrl: opts.agentServerUrl ?? null,
    agentDownloadUrl: opts.agentDownloadUrl ?? null,
    mimirUrl: opts.mimirUrl ?? null,
    gateway: opts.gateway ?? null,
    fleetChanges: opts.fleetChanges ?? null,
    identityDirectory: opts.identityDirectory ?? null,
    authenticatedKey: opts.authenticatedKey ?? null,
    fairShare: opts.fairShare ?? null,
    apiLatency: opts.apiLatency ?? null,
  };
}

export type TRPCContext = ReturnType<typeof createTRPCContext>;

/** Who may call a procedure: the tier is set by the base procedure, `role`/`audit` by each procedure. */
export interface ProcedureMeta extends OpenApiMeta {
  /** public: anyone; user: a signed-in person; organization: a member or an API key of the active organization. */
  access?: "public" | "user" | "organization";
  /** Least role needed (organization tier). Queries default to viewer; mutations must set it. */
  role?: Role;
  /** Audit action and target type written for every successful mutation, e.g. `{ action: "apiKey.revoke", target: "apiKey" }`. */
  audit?: { action: string; target: string };
}

const t = initTRPC
  .context<TRPCContext>()
  .meta<ProcedureMeta>()
  .create({
    transformer: superjson,
    // Live pages (SSE subscriptions): a ping every 15 s keeps idle streams open through proxies,
    // and a client that hears nothing for 45 s reconnects (and then refetches what it shows).
    sse: { ping: { enabled: true, intervalMs: 15_000 }, client: { reconnectAfterInactivityMs: 45_000 } },
    errorFormatter({ shape, error, path }) {
      // Our own failures: the client gets a reference, the log gets the error (never a raw
      // Prisma/Postgres message or a stack in a response body).
      if (error.code === "INTERNAL_SERVER_ERROR") {
        const reference = reportInternalError(error.cause ?? error, path ?? "?");
        const { stack: _stack, ...data } = shape.data;
        return { ...shape, message: internalErrorMessage(reference), data: { ...data, zodError: null } };
      }
      // Input errors carry the per-field messages so forms can show them next to the field.
      const zodError = error.cause instanceof ZodError ? z.flattenError(error.cause) : null;
      // Rate limited: when to try again (the HTTP handlers also send it as Retry-After).
      const retryAfterSeconds = error.cause instanceof RateLimited ? error.cause.retryAfterSeconds : null;
      return { ...shape, data: { ...shape.data, zodError, retryAfterSeconds } };
    },
  });

export const createCallerFactory = t.createCallerFactory;
export const createTRPCRouter = t.router;

/** Where in a raw input the first NUL character is, or null. */
function pathOfNul(value: unknown, path: Array<string | number> = []): Array<string | number> | null {
  if (typeof value === "string") return value.includes("\u0000") ? path : null;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = pathOfNul(item, [...path, index]);
      if (found) return found;
    }
  } else if (value && typeof value === "object" && !(value instanceof Date)) {
    for (const [key, item] of Object.entries(value)) {
      const found = pathOfNul(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

/**
 * Input hygiene for every procedure (issue 8, #6). A NUL character has no meaning in any input
 * and Postgres cannot store or compare it: refused, naming the field. A value the database
 * cannot take (a date past its range, a number past its column, a malformed cursor value) is
 * the caller's mistake, answered 400, never 500 with the driver's message.
 */
const inputHygiene = t.middleware(async ({ getRawInput, next }) => {
  const nulAt = pathOfNul(await getRawInput());
  if (nulAt) {
    throw new TRPCError({
      code: "BAD_REQUEST",
      message: "Input validation failed",
      // Made by zod itself, so it has the very shape of every other input error (REST `issues`).
      cause: z
        .unknown()
        .superRefine((_value, ctx) =>
          ctx.addIssue({ code: "custom", path: nulAt, message: "must not contain NUL (U+0000)" }),
        )
        .safeParse(null).error,
    });
  }
  const result = await next();
  if (!result.ok && (isDataException(result.error.cause) || isUnconvertibleArgument(result.error.cause))) {
    throw new TRPCError({
      code: "BAD_REQUEST",
      message:
        "a value in the request is out of range or malformed (a date, a number or a cursor): check the input",
    });
  }
  return result;
});

const procedure = t.procedure.use(inputHygiene);

/** No session required. Keep to things that reveal nothing about any tenant. */
export const publicProcedure = procedure.meta({ access: "public" });

/** Signed in as a person (API keys are not people). `ctx.session` is non-null below this point. */
export const protectedProcedure = procedure.meta({ access: "user" }).use(({ ctx, next }) => {
  if (!ctx.session) {
    throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in first" });
  }
  return next({ ctx: { ...ctx, session: ctx.session } });
});

interface ResolvedCaller {
  actor: Actor;
  organization: { id: string; slug: string; name: string; role: Role };
}

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * The caller of an organization procedure, from the database on every call (never from the
 * session, which may be stale after a membership is withdrawn). A non-member gets NOT_FOUND, the
 * same answer as for an organization that does not exist, so the API does not reveal which
 * organizations exist. An API key works in its own organization only, whatever slug is asked for.
 */
async function resolveCaller(ctx: TRPCContext): Promise<ResolvedCaller> {
  const bearer = ctx.authorization ? BEARER.exec(ctx.authorization.trim())?.[1] : undefined;
  if (ctx.authorization && !bearer) {
    throw new TRPCError({ code: "UNAUTHORIZED", message: "Authorization must be `Bearer efk_…`" });
  }
  if (bearer) {
    const key = ctx.authenticatedKey ?? (await authenticateApiKey(ctx.db, bearer));
    if (!key) throw new TRPCError({ code: "UNAUTHORIZED", message: "API key unknown, revoked or expired" });
    return {
      actor: { type: "apiKey", id: key.id, role: key.role },
      organization: { ...key.organization, role: key.role },
    };
  }
  if (!ctx.session) {
    throw new TRPCError({
      code: "UNAUTHORIZED",
      message: "sign in first, or send an API key (Authorization: Bearer efk_…)",
    });
  }
  const slug = ctx.activeOrganizationSlug;
  if (!slug) throw new TRPCError({ code: "BAD_REQUEST", message: "no active organization selected" });
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
  return {
    actor: { type: "user", id: ctx.session.userId, role: membership.role },
    organization: { ...membership.organization, role: membership.role },
  };
}

/** The role a procedure needs, or null when it declares none and must therefore be refused. */
export function requiredRole(meta: ProcedureMeta | undefined, type: string): Role | null {
  if (meta?.role) return meta.role;
  return type === "query" ? "viewer" : null;
}

/**
 * A person who is a member of the active organization, or an API key of it, with at least the
 * procedure's role. Mutations are audited here.
 */
export const organizationProcedure = procedure
  .meta({ access: "organization" })
  .use(async ({ ctx, meta, type, path, next }) => {
    const began = performance.now();
    const caller = await resolveCaller(ctx);
    const needed = requiredRole(meta, type);
    if (!needed || (type === "mutation" && !meta?.audit)) {
      throw new TRPCError({
        code: "FORBIDDEN",
        message: `${path} declares no required role or audit action; refused until it does`,
      });
    }
    if (!roleAtLeast(caller.actor.role, needed)) {
      throw new TRPCError({
        code: "FORBIDDEN",
        message: `${path} needs the ${needed} role; you are ${caller.actor.role}`,
      });
    }
    const { organization, actor } = caller;
    // Fair share across organizations (fair-share.ts); a live subscription holds no slot.
    const release = type === "subscription" ? null : await admitFairly(ctx.fairShare, organization.id, actor);
    const audit: AuditRecorder = createAuditRecorder();
    const proceed = async (db: Db) => {
      try {
        return await next({
          ctx: { ...ctx, db, organization, actor, audit, tenantDb: tenantDb(db, organization.id) },
        });
      } finally {
        release?.();
        // The latency the organization experienced (its SLO page); a live subscription has none.
        if (type !== "subscription")
          ctx.apiLatency?.observe(organization.id, (performance.now() - began) / 1000, { kind: type });
      }
    };
    if (type !== "mutation" || !meta?.audit) return proceed(ctx.db);
    const auditAction = meta.audit;
    // The mutation and its audit row commit together: one transaction around handler and audit
    // write (see mutation-transaction.ts). A failed mutation rolls back whatever it wrote.
    try {
      return await inMutationTransaction(ctx.db, async (db) => {
        const result = await proceed(db);
        if (!result.ok) throw new FailedMutation(result);
        await writeAuditRow(db, {
          organizationId: organization.id,
          actor,
          action: auditAction.action,
          targetType: auditAction.target,
          change: audit.change() ?? defaultChange(result.data),
        });
        return result;
      });
    } catch (error) {
      if (error instanceof FailedMutation) return error.result as Awaited<ReturnType<typeof proceed>>;
      throw error;
    }
  });

/** A slot for the call, or TOO_MANY_REQUESTS saying when to retry (`retryAfterSeconds` in the error data). */
async function admitFairly(
  fairShare: FairShare | null,
  organizationId: string,
  actor: Actor,
): Promise<(() => void) | null> {
  if (!fairShare) return null;
  try {
    return await fairShare.admit(organizationId, actor.type === "apiKey" ? actor.id : null);
  } catch (error) {
    if (error instanceof RateLimited) {
      throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: error.message, cause: error });
    }
    throw error;
  }
}

/** Carries a failed handler's result out of the transaction, which it rolls back. */
class FailedMutation extends Error {
  constructor(readonly result: unknown) {
    super("mutation failed; its transaction was rolled back");
  }
}

/** When a handler describes nothing: the target is the returned object's id, the after state is it. */
function defaultChange(data: unknown): AuditChange {
  const id = data && typeof data === "object" && "id" in data ? (data as { id: unknown }).id : null;
  return { targetId: typeof id === "string" ? id : null, before: null, after: data ?? null };
}
