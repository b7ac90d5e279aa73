export { TENANT_MAX_PAYLOAD, type TenantAccount, tenantAccountJwt } from "./accounts";
export {
  createTenancySecrets,
  platformExports,
  serverAuthConfig,
  type TenancySecrets,
  tenancySecretsSchema,
  upgradeTenancySecrets,
} from "./bootstrap";
export { loadTenancySecrets, writeTenancyFiles } from "./files";
export { formatCreds, keyPairFromSeed, seedOf } from "./keys";
export { type LeafNodeConfigInput, leafNodeConfig } from "./leaf";
export { AccountPushError, pushAccountJwt } from "./push";
export * as subjects from "./subjects";
export {
  type NodeIdentity,
  nodeUserJwt,
  type SiteIdentity,
  siteLeafUserJwt,
  siteSystemLinkUserJwt,
} from "./users";
