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
    /** The gateway's HTTP server; the API asks its internal API for site leaf bundles and enrollment credentials. */
    GATEWAY_URL: z
      .url({ error: "GATEWAY_URL must be the gateway's base URL, e.g. http://127.0.0.1:8090" })
      .optional(),
    /** Shared secret of the gateway's internal API (the gateway has the same value). */
    GATEWAY_INTERNAL_TOKEN: z
      .string()
      .min(32, "GATEWAY_INTERNAL_TOKEN must be at least 32 characters")
      .optional(),
    NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  },
  client: {},
  experimental__runtimeEnv: {},
  // `next build` imports server modules; validation still runs when the server starts.
  skipValidation: process.env.EDGEFLEET_SKIP_ENV_VALIDATION === "1",
  emptyStringAsUndefined: true,
});
