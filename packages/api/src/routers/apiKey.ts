import {
  apiKeyIdInput,
  apiKeySummary,
  createApiKey,
  createApiKeyInput,
  createdApiKey,
  getApiKey,
  listApiKeys,
  listApiKeysOutput,
  revokeApiKey,
  revokeApiKeyInput,
} from "../domain/api-keys";
import { createTRPCRouter, organizationProcedure } from "../trpc";

const tags = ["API keys"];

export const apiKeyRouter = createTRPCRouter({
  list: organizationProcedure
    .meta({ role: "admin", openapi: { method: "GET", path: "/api-keys", tags, summary: "List API keys" } })
    .output(listApiKeysOutput)
    .query(({ ctx }) => listApiKeys(ctx.tenantDb)),

  byId: organizationProcedure
    .meta({
      role: "admin",
      openapi: { method: "GET", path: "/api-keys/{id}", tags, summary: "Get an API key" },
    })
    .input(apiKeyIdInput)
    .output(apiKeySummary)
    .query(({ ctx, input }) => getApiKey(ctx.tenantDb, input.id)),

  /** The response carries the key itself, once; only its hash is stored. */
  create: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "apiKey.create", target: "apiKey" },
      openapi: { method: "POST", path: "/api-keys", tags, summary: "Create an API key (shown once)" },
    })
    .input(createApiKeyInput)
    .output(createdApiKey)
    .mutation(async ({ ctx, input }) => {
      const created = await createApiKey(ctx.tenantDb, ctx.organization.id, ctx.actor, input);
      const { key: _secret, ...after } = created;
      ctx.audit.record({ targetId: created.id, before: null, after });
      return created;
    }),

  revoke: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "apiKey.revoke", target: "apiKey" },
      openapi: { method: "POST", path: "/api-keys/{id}/revoke", tags, summary: "Revoke an API key" },
    })
    .input(revokeApiKeyInput)
    .output(apiKeySummary)
    .mutation(async ({ ctx, input }) => {
      const { before, after } = await revokeApiKey(ctx.tenantDb, input.id);
      ctx.audit.record({ targetId: input.id, before, after });
      return after;
    }),
});
