import { SITE_CACHE_DEFAULT_MAX_BYTES, siteCacheDomain } from "@edgefleet/agent-sdk/protocol";
import type { TenancySecrets } from "./bootstrap";

export { SITE_CACHE_DEFAULT_MAX_BYTES };

export interface LeafNodeConfigInput {
  serverName: string;
  /** Where the site's agents connect, e.g. 0.0.0.0:4222 on the site gateway box. */
  listen: string;
  /** The hub's leafnode URL(s), e.g. nats-leaf://hub.example.com:7422. */
  hubLeafUrls: string[];
  /** Path of the site's credentials file on the leaf machine. */
  credentialsPath: string;
  accountPublicKey: string;
  accountJwt: string;
  /**
   * The site's system link (siteSystemLinkUserJwt) on the leaf machine: the leaf hears its
   * organization's account updates over it and cuts revoked nodes off itself (issue 8 #13).
   */
  systemCredentialsPath?: string;
  /** The public enrollment credentials on the leaf machine: nodes enroll through the leaf. */
  enrollCredentialsPath?: string;
  /**
   * The site artifact cache: JetStream on the leaf in the site's own domain, its file store
   * bounded to `maxBytes` (the stream EF_SITE_CACHE gets the same bound, least recently used
   * artifacts evicted first). Absent: no JetStream, the site's nodes fetch from the hub.
   */
  siteCache?: { siteId: string; storeDir: string; maxBytes: number };
  /** How long a client may be silent before the leaf pings it (default: leafPingIntervalSeconds(60)). */
  pingIntervalSeconds?: number;
}

/**
 * S2 level of the link that carries the nodes' messages: the fastest, still a few times smaller on
 * JSON reports over a WAN. A fixed level: s2_auto climbs to s2_best as the RTT grows, so a loaded
 * leaf spent more CPU compressing the busier it got (62 of 150 links at s2_best in the 100,000 run).
 */
export const LEAF_LINK_COMPRESSION = "s2_fast";
/**
 * The system and enrollment links carry a few messages an hour; S2's buffers cost ~2.5 MB per
 * compressed link on each side (heap profiles of a hub and a leaf, 50 sites × 3 links), for nothing.
 */
export const LEAF_QUIET_LINK_COMPRESSION = "off";

/**
 * The leaf pings a client silent for one and a half of the fleet's metrics intervals, at least a
 * minute: a node's reports then keep its link free of PINGs (two thirds of an idle node's frames
 * at its leaf when the leaf pinged every 30 s), and a node that lost power leaves a half-open
 * connection that is pinged out within three of these (two unanswered pings), then its
 * DISCONNECT event marks it offline.
 */
export function leafPingIntervalSeconds(metricsIntervalSeconds: number): number {
  return Math.max(60, Math.round(metricsIntervalSeconds * 1.5));
}

/**
 * nats-server configuration for a site's leaf node. The leaf runs in operator mode with the
 * organization's account preloaded, so it checks every agent's own credentials and
 * permissions locally; towards the hub it speaks as the site (siteLeafUserJwt), bound to
 * the organization's account. The platform account is deliberately not known here: service
 * imports resolve on the hub. With the optional links, the leaf also follows the account's
 * updates (revocations) through the system account and lets nodes enroll through it.
 */
export function leafNodeConfig(secrets: TenancySecrets, input: LeafNodeConfigInput): string {
  const remote = (
    credentials: string,
    account: string,
    why: string,
    compression = LEAF_QUIET_LINK_COMPRESSION,
  ) => [
    `    # ${why}`,
    "    {",
    `      urls: ${JSON.stringify(input.hubLeafUrls)}`,
    `      credentials: ${JSON.stringify(credentials)}`,
    `      account: ${account}`,
    `      compression: ${compression}`,
    "    }",
  ];
  return [
    "# Edgefleet site leaf node (generated). Agents of this site connect here.",
    `server_name: ${JSON.stringify(input.serverName)}`,
    `listen: ${JSON.stringify(input.listen)}`,
    "max_payload: 1MB",
    // The server skips the ping while the client talks (leafPingIntervalSeconds).
    `ping_interval: "${input.pingIntervalSeconds ?? leafPingIntervalSeconds(60)}s"`,
    "ping_max: 2",
    `operator: ${secrets.operator.jwt}`,
    `system_account: ${secrets.system.publicKey}`,
    "resolver: MEMORY",
    "resolver_preload: {",
    // The operator names a system account, so the leaf must know it (a public document).
    `  ${secrets.system.publicKey}: ${secrets.system.jwt}`,
    `  ${input.accountPublicKey}: ${input.accountJwt}`,
    ...(input.enrollCredentialsPath ? [`  ${secrets.enroll.publicKey}: ${secrets.enroll.jwt}`] : []),
    "}",
    ...(input.siteCache
      ? [
          "jetstream {",
          `  domain: ${JSON.stringify(siteCacheDomain(input.siteCache.siteId))}`,
          `  store_dir: ${JSON.stringify(input.siteCache.storeDir)}`,
          "  max_memory_store: 0",
          // Headroom over the stream's bound for JetStream's own files (indexes, metadata).
          `  max_file_store: ${input.siteCache.maxBytes + 64 * 1024 * 1024}`,
          "}",
        ]
      : []),
    "leafnodes {",
    "  remotes: [",
    ...remote(
      input.credentialsPath,
      input.accountPublicKey,
      "the organization: its nodes' messages",
      LEAF_LINK_COMPRESSION,
    ),
    ...(input.systemCredentialsPath
      ? remote(
          input.systemCredentialsPath,
          secrets.system.publicKey,
          "the organization's account updates (revoked nodes are cut off here)",
        )
      : []),
    ...(input.enrollCredentialsPath
      ? remote(input.enrollCredentialsPath, secrets.enroll.publicKey, "enrollment of this site's nodes")
      : []),
    "  ]",
    "}",
    "",
  ].join("\n");
}
