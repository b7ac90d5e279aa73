export { TENANT_MAX_PAYLOAD, type TenantAccount, tenantAccountJwt } from "./accounts";
export {
  createTenancySecrets,
  platformExports,
  serverAuthConfig,
  type TenancySecrets,
  tenancySecretsSchema,
  upgradeTenancySecrets,
} from "./bootstrap";
export { downlinkToken, nodeAddress } from "./downlink";
export { loadTenancySecrets, writeTenancyFiles } from "./files";
export { formatCreds, keyPairFromSeed, seedOf } from "./keys";
export {
  LEAF_LINK_COMPRESSION,
  LEAF_QUIET_LINK_COMPRESSION,
  type LeafNodeConfigInput,
  leafNodeConfig,
  leafPingIntervalSeconds,
  SITE_CACHE_DEFAULT_MAX_BYTES,
} from "./leaf";
export { AccountPushError, pushAccountJwt } from "./push";
export * as subjects from "./subjects";
export {
  type NodeIdentity,
  nodeUserJwt,
  type SiteCacheSeederIdentity,
  type SiteIdentity,
  siteCacheSeederInbox,
  siteCacheSeederUserJwt,
  siteLeafUserJwt,
  siteSystemLinkUserJwt,
} from "./users";
