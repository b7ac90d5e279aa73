export { type CreatePrismaClientOptions, createPrismaClient, type Db } from "./client";
export { connectionConfigFromUrl, requireDatabaseUrl } from "./connection";
export type * from "./generated/prisma/client";
export {
  ActorType,
  AppInstanceState,
  NodeStatus,
  Prisma,
  Role,
  RolloutStatus,
} from "./generated/prisma/client";
export {
  IdentityConflictError,
  type IdentityInput,
  type OrganizationMembership,
  syncUserFromIdentity,
} from "./identity";
export { DEMO_ORGANIZATIONS, type SeedSummary, seedDemoData } from "./seed";
export { TENANT_OWNED_MODELS, type TenantDb, TenantScopeError, tenantDb } from "./tenant";
