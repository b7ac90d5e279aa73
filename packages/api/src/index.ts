import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "./root";

export { ARTIFACT_UPLOAD_PATH, handleArtifactUpload } from "./artifact-upload";
export { API_KEY_PREFIX } from "./domain/api-keys";
export { nodeStatuses } from "./domain/nodes";
export {
  type PushActionDeps,
  type PushActionOutput,
  performPushAction,
  previewPushAction,
  pushActionInput,
} from "./domain/push-actions";
export { ROLES, roleAtLeast } from "./domain/roles";
export {
  DEFAULT_FAIR_SHARE,
  defaultConcurrency,
  FairShare,
  type FairShareOptions,
  RateLimited,
} from "./fair-share";
export type { GatewayConnection } from "./gateway-client";
export {
  internalErrorMessage,
  MAX_REQUEST_BODY_BYTES,
  readBoundedBody,
  refuseCrossSiteMutation,
  reportInternalError,
  withBody,
} from "./http-guards";
export { type IdentityDirectory, keycloakDirectory } from "./keycloak-directory";
export {
  createOpenApiDocument,
  handleAuditExport,
  handleRestRequest,
  REST_BASE_PATH,
  type RestRequestOptions,
} from "./openapi";
export { type AppRouter, appRouter, createCaller } from "./root";
export {
  type ApiSession,
  type CreateContextOptions,
  createTRPCContext,
  type ProcedureMeta,
  type SessionMembership,
} from "./trpc";

export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export { API_LATENCY_SERIES, OrgHistograms } from "@edgefleet/alerts";
export { type HistogramPusher, startHistogramPusher } from "./slo-push";
