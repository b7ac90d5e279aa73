export { API_KEY_PREFIX, hashApiKey, mintApiKey } from "./api-key-secrets";
export { type CreatePrismaClientOptions, createPrismaClient, type Db } from "./client";
export { connectionConfigFromUrl, requireDatabaseUrl } from "./connection";
export { DEMO_ARTIFACT_BYTES, type DemoArtifact, demoArtifact } from "./demo-artifacts";
export { type DeltaRequest, desiredDeltasSince, type NodeDelta } from "./desired-deltas";
export {
  DESIRED_REVISION_CHANNEL,
  type DesiredAppSpec,
  type DesiredAppsChange,
  type DesiredAppsResult,
  type DesiredDelta,
  DesiredStateError,
  desiredDeltaSince,
  setDesiredApps,
} from "./desired-state";
export {
  type NodeDesiredResult,
  nodeIdsOfNotification,
  setDesiredAppsForNodes,
  setDesiredAppsForNodesInTransaction,
  type Tx,
} from "./desired-state-batch";
export {
  createEnrollmentToken,
  ENROLLMENT_TOKEN_PREFIX,
  hashEnrollmentToken,
  type NewEnrollmentToken,
} from "./enrollment-tokens";
export { isDataException, isUnconvertibleArgument, postgresErrorCode } from "./errors";
export { type FleetChange, FleetChangeFeed } from "./fleet-change-feed";
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
export {
  ACCOUNT_CHANGED_CHANNEL,
  approveNode,
  moveNodeToSite,
  NODE_MOVED_CHANNEL,
  revokeNode,
} from "./node-lifecycle";
export {
  FLEET_CHANGED_CHANNEL,
  pruneStatusEvents,
  recordEnrollmentEvents,
  STATUS_EVENT_RETENTION_DAYS,
  STATUS_REASONS,
  type StatusReason,
  type StatusTransitionResult,
  updateNodesWithStatusEvents,
} from "./node-status-events";
export { INSTANCES_CHANGED_CHANNEL, ROLLOUT_CHANGED_CHANNEL } from "./rollout-channels";
export { DEMO_ORGANIZATIONS, demoNodes, type SeedOptions, type SeedSummary, seedDemoData } from "./seed";
export {
  recordSiteCredential,
  revokedSiteCredentialKeys,
  revokeSiteCredentials,
  SITE_CREDENTIALS_DEFAULT_DAYS,
} from "./site-credentials";
export { TENANT_OWNED_MODELS, type TenantDb, TenantScopeError, tenantDb } from "./tenant";
