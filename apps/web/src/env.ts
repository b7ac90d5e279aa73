import { createEnv } from "@t3-oss/env-nextjs";
import { z } from "zod";

/**
 * The one place the web app reads its environment. Every server-side setting is validated at
 * start-up so a missing or malformed variable fails loudly instead of surfacing as an odd
 * sign-in error later.
 */
export const env = createEnv({
  server: {
    DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: "DATABASE_URL must be a postgresql:// URL" }),
    AUTH_SECRET: z.string().min(16, "AUTH_SECRET must be at least 16 characters"),
    AUTH_URL: z.url(),
    AUTH_KEYCLOAK_ID: z.string().min(1),
    AUTH_KEYCLOAK_SECRET: z.string().min(1),
    AUTH_KEYCLOAK_ISSUER: z.url(),
    /** Mimir base URL; the API's metrics procedures read it (node charts), tenant = organization id. */
    MIMIR_URL: z.url({ error: "MIMIR_URL must be the Mimir base URL, e.g. http://127.0.0.1:9009" }),
    /** NATS URL written into agent install commands (a site's leaf node, or the hub's leaf port). */
    AGENT_SERVER_URL: z.string().min(1).optional(),
    /**
     * Base URL the install command downloads the native agent from (`<base>/edgefleet-agent-linux-<arch>`
     * and `<base>/edgefleet-agent.service`); default: this console's /downloads/agent.
     */
    AGENT_DOWNLOAD_URL: z.url().optional(),
    /** The native agent's release binaries that /downloads/agent serves (apps/agent/build.sh --release). */
    AGENT_DIST_DIR: z.string().min(1).optional(),
    /**
     * The gateway's HTTP server; the API asks its internal API for site leaf bundles and enrollment
     * credentials. Comma-separated for several replicas (one that cannot be reached is skipped).
     */
    GATEWAY_URL: z
      .string()
      .transform((value) =>
        value
          .split(",")
          .map((url) => url.trim())
          .filter((url) => url.length > 0),
      )
      .pipe(
        z
          .array(z.url({ error: "GATEWAY_URL must be the gateway's base URL, e.g. http://127.0.0.1:8090" }))
          .min(1, "GATEWAY_URL must name at least one gateway"),
      )
      .optional(),
    /** Shared secret of the gateway's internal API (the gateway has the same value). */
    GATEWAY_INTERNAL_TOKEN: z
      .string()
      .min(32, "GATEWAY_INTERNAL_TOKEN must be at least 32 characters")
      .optional(),
    /**
     * Tenant fairness (fair-share.ts in @edgefleet/api), per web process: API calls running at
     * once (unset: two per core, at least 4) and of them at most per organization (unset: half),
     * requests per second (and burst) per organization and per API key. Past a rate: 429.
     */
    EDGEFLEET_API_CONCURRENCY: z.coerce.number().int().min(1).max(1024).optional(),
    EDGEFLEET_API_MAX_PER_ORG: z.coerce.number().int().min(1).max(1024).optional(),
    EDGEFLEET_ORG_RATE: z.coerce.number().positive().default(200),
    EDGEFLEET_ORG_BURST: z.coerce.number().int().min(1).default(400),
    EDGEFLEET_API_KEY_RATE: z.coerce.number().positive().default(50),
    EDGEFLEET_API_KEY_BURST: z.coerce.number().int().min(1).default(100),
    /**
     * Web Push (docs/alerts.md): the VAPID public key browsers subscribe with (the gateway holds
     * the pair) and the secret the notifications' action tokens are signed with. Unset: the
     * console offers no push subscription and refuses actions.
     */
    EDGEFLEET_VAPID_PUBLIC_KEY: z
      .string()
      .regex(/^[A-Za-z0-9_-]{80,90}$/, "EDGEFLEET_VAPID_PUBLIC_KEY must be a base64url P-256 public key")
      .optional(),
    EDGEFLEET_PUSH_ACTION_SECRET: z
      .string()
      .min(32, "EDGEFLEET_PUSH_ACTION_SECRET must be at least 32 characters")
      .optional(),
    NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  },
  client: {},
  experimental__runtimeEnv: {},
  // `next build` imports server modules; validation still runs when the server starts.
  skipValidation: process.env.EDGEFLEET_SKIP_ENV_VALIDATION === "1",
  emptyStringAsUndefined: true,
});
