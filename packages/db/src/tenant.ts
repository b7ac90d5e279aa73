import type { Db } from "./client";
import { Prisma } from "./generated/prisma/client";

/**
 * Tenant-scoped data access: `tenantDb(db, organizationId)` returns a client whose every model
 * operation is confined to one organization, so a caller cannot forget the tenant.
 *
 * Tenant-owned models (every model with an `organizationId` column, found automatically):
 * - reads   findUnique(OrThrow), findFirst(OrThrow), findMany, count, aggregate, groupBy:
 *           `organizationId` is added to `where` (another tenant's row by id -> null / 0 / not found)
 * - writes  update, updateMany(AndReturn), delete, deleteMany: `where` scoped the same way
 *           (update/delete of another tenant's row -> Prisma "record not found" P2025; *Many -> count 0)
 * - creates create, createMany(AndReturn), upsert: `organizationId` is set in the data
 * - a `where`/`data` that names a different organizationId throws TenantScopeError
 * - write `data` may only contain scalar fields (set foreign keys as ids: `siteId`, `nodeId`, ...).
 *   Nested relation writes (connect, create, ...) are refused: they could reach rows of another
 *   tenant. The composite foreign keys in the schema then guarantee every referenced row belongs
 *   to the same organization.
 * - reads through relations (include/select) follow those same-tenant foreign keys; a
 *   `memberships` relation anywhere in include/select/_count is filtered to this organization
 *   (so a user's memberships elsewhere stay hidden).
 * Organization: reads and `update`/`updateMany` see only this organization; only `name` may be
 * changed; creating or deleting organizations is refused.
 * User (global): read-only, limited to members of this organization.
 * Raw SQL ($queryRaw, $executeRaw, ...Unsafe) is refused: it cannot be scoped. Use the base
 * client and filter on organization_id explicitly.
 * Any other or future operation is refused (fail closed).
 * Interactive and batch `$transaction`s on the returned client keep the scoping.
 */
export function tenantDb(db: Db, organizationId: string) {
  if (!UUID.test(organizationId)) {
    throw new TenantScopeError(
      `tenantDb needs an organization id (UUID), got ${JSON.stringify(organizationId)}`,
    );
  }
  return db.$extends({
    name: "tenant-scope",
    query: {
      async $allOperations({ model, operation, args, query }) {
        if (!model) {
          throw new TenantScopeError(
            `${operation} is not available on a tenant-scoped client: raw SQL cannot be scoped; use the base client and filter on organization_id`,
          );
        }
        return query(scopeArgs(model, operation, args as Args | undefined, organizationId));
      },
    },
  });
}

export type TenantDb = ReturnType<typeof tenantDb>;

/** Thrown when a query would leave, or cannot be confined to, the client's organization. */
export class TenantScopeError extends Error {
  override name = "TenantScopeError";
}

type Args = Record<string, unknown>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const READ_OPERATIONS = new Set([
  "findUnique",
  "findUniqueOrThrow",
  "findFirst",
  "findFirstOrThrow",
  "findMany",
  "count",
  "aggregate",
  "groupBy",
]);
const WHERE_WRITE_OPERATIONS = new Set([
  "update",
  "updateMany",
  "updateManyAndReturn",
  "delete",
  "deleteMany",
]);
const CREATE_OPERATIONS = new Set(["create", "createMany", "createManyAndReturn"]);

/** Scalar field names per model, from the generated client; the source of "tenant-owned". */
const scalarFieldsByModel = new Map<string, Set<string>>(
  Object.values(Prisma.ModelName).map((model) => {
    const fieldEnum = (Prisma as unknown as Record<string, Record<string, string> | undefined>)[
      `${model}ScalarFieldEnum`
    ];
    if (!fieldEnum) throw new Error(`generated client lacks ${model}ScalarFieldEnum`);
    return [model, new Set(Object.values(fieldEnum))];
  }),
);

/** Models whose rows belong to one organization (they carry `organizationId`). */
export const TENANT_OWNED_MODELS: ReadonlySet<string> = new Set(
  [...scalarFieldsByModel].filter(([, fields]) => fields.has("organizationId")).map(([model]) => model),
);

function scopeArgs(model: string, operation: string, args: Args | undefined, organizationId: string): Args {
  const scoped = scopeRelationReads({ ...args }, organizationId);
  if (model === Prisma.ModelName.Organization) return scopeOrganization(operation, scoped, organizationId);
  if (model === Prisma.ModelName.User) return scopeUser(operation, scoped, organizationId);
  if (!TENANT_OWNED_MODELS.has(model)) {
    throw new TenantScopeError(`${model} is neither tenant-owned nor handled by tenantDb`);
  }
  const scalarFields = scalarFieldsByModel.get(model) ?? new Set<string>();
  const context = { model, operation, organizationId, scalarFields };

  if (READ_OPERATIONS.has(operation)) return { ...scoped, where: scopeWhere(scoped.where, context) };
  if (WHERE_WRITE_OPERATIONS.has(operation)) {
    const result: Args = { ...scoped, where: scopeWhere(scoped.where, context) };
    if (scoped.data !== undefined) result.data = checkUpdateData(scoped.data, context);
    return result;
  }
  if (CREATE_OPERATIONS.has(operation)) {
    const data = Array.isArray(scoped.data)
      ? scoped.data.map((row) => withOrganization(row, context))
      : withOrganization(scoped.data, context);
    return { ...scoped, data };
  }
  if (operation === "upsert") {
    return {
      ...scoped,
      where: scopeWhere(scoped.where, context),
      create: withOrganization(scoped.create, context),
      update: checkUpdateData(scoped.update, context),
    };
  }
  throw new TenantScopeError(`${model}.${operation} is not supported on a tenant-scoped client`);
}

interface ScopeContext {
  model: string;
  operation: string;
  organizationId: string;
  scalarFields: Set<string>;
}

function scopeWhere(where: unknown, context: ScopeContext): Args {
  const input = asObject(where, "where", context);
  for (const [key, value] of Object.entries(input)) {
    // compound unique keys such as organizationId_name: { organizationId, name }
    if (key.startsWith("organizationId_") && value && typeof value === "object") {
      assertSameOrganization((value as Args).organizationId, context);
    }
  }
  if ("organizationId" in input) assertSameOrganization(input.organizationId, context);
  return { ...input, organizationId: context.organizationId };
}

function withOrganization(data: unknown, context: ScopeContext): Args {
  const row = checkScalarData(data, context);
  if ("organizationId" in row) assertSameOrganization(row.organizationId, context);
  return { ...row, organizationId: context.organizationId };
}

function checkUpdateData(data: unknown, context: ScopeContext): Args {
  const row = checkScalarData(data, context);
  if ("organizationId" in row) assertSameOrganization(row.organizationId, context);
  return row;
}

function checkScalarData(data: unknown, context: ScopeContext): Args {
  const row = asObject(data, "data", context);
  for (const key of Object.keys(row)) {
    if (!context.scalarFields.has(key)) {
      throw new TenantScopeError(
        `${context.model}.${context.operation}: "${key}" is not a scalar field; tenant-scoped writes accept scalar fields only (set foreign keys as ids, no nested relation writes)`,
      );
    }
  }
  return row;
}

function assertSameOrganization(value: unknown, context: ScopeContext): void {
  if (value !== undefined && value !== context.organizationId) {
    throw new TenantScopeError(
      `${context.model}.${context.operation}: organizationId ${JSON.stringify(value)} does not match the tenant-scoped client's organization`,
    );
  }
}

function asObject(value: unknown, what: string, context: Pick<ScopeContext, "model" | "operation">): Args {
  if (value === undefined) return {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TenantScopeError(`${context.model}.${context.operation}: ${what} must be an object`);
  }
  return value as Args;
}

function scopeOrganization(operation: string, args: Args, organizationId: string): Args {
  const context = { model: "Organization", operation };
  if (READ_OPERATIONS.has(operation) || operation === "update" || operation === "updateMany") {
    const where = asObject(args.where, "where", context);
    if ("id" in where && where.id !== organizationId) {
      throw new TenantScopeError(
        `Organization.${operation}: id does not match the tenant-scoped client's organization`,
      );
    }
    const result: Args = { ...args, where: { ...where, id: organizationId } };
    if (args.data !== undefined) {
      const data = asObject(args.data, "data", context);
      const forbidden = Object.keys(data).filter((key) => key !== "name");
      if (forbidden.length > 0) {
        throw new TenantScopeError(
          `Organization.${operation}: only "name" can be changed, not ${forbidden.join(", ")}`,
        );
      }
    }
    return result;
  }
  throw new TenantScopeError(`Organization.${operation} is not allowed on a tenant-scoped client`);
}

function scopeUser(operation: string, args: Args, organizationId: string): Args {
  if (!READ_OPERATIONS.has(operation)) {
    throw new TenantScopeError(
      `User.${operation} is not allowed on a tenant-scoped client (users are global)`,
    );
  }
  const where = asObject(args.where, "where", { model: "User", operation });
  const memberOfThisOrganization = { memberships: { some: { organizationId } } };
  // findUnique needs its unique field at the top level, so the extra condition goes into AND.
  const and = where.AND === undefined ? [] : Array.isArray(where.AND) ? where.AND : [where.AND];
  return { ...args, where: { ...where, AND: [...and, memberOfThisOrganization] } };
}

/** Filters every `memberships` relation read (include, select, _count) to this organization. */
function scopeRelationReads(args: Args, organizationId: string): Args {
  for (const key of ["include", "select"] as const) {
    if (args[key] && typeof args[key] === "object")
      args[key] = scopeSelection(args[key] as Args, organizationId);
  }
  return args;
}

function scopeSelection(selection: Args, organizationId: string): Args {
  const result: Args = {};
  for (const [field, value] of Object.entries(selection)) {
    if (field === "memberships" && value) {
      const nested = value === true ? {} : scopeRelationReads({ ...(value as Args) }, organizationId);
      const where = asObject(nested.where, "memberships.where", { model: "Membership", operation: "read" });
      result[field] = { ...nested, where: { ...where, organizationId } };
    } else if (value && typeof value === "object") {
      // nested relation args ({ include, select, where, ... }) or _count: { select: {...} }
      result[field] = scopeRelationReads({ ...(value as Args) }, organizationId);
    } else {
      result[field] = value;
    }
  }
  return result;
}
