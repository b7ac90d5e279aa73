import {
  approve,
  createdToken,
  createToken,
  createTokenInput,
  DEFAULT_AGENT_SERVER_URL,
  enrollmentTokenSummary,
  getToken,
  listTokens,
  listTokensInput,
  listTokensOutput,
  nodeIdInput,
  nodeLifecycleOutput,
  revoke,
  revokeToken,
  tokenIdInput,
} from "../domain/enrollment";
import { fetchEnrollCredentials } from "../gateway-client";
import { createTRPCRouter, organizationProcedure } from "../trpc";

const tags = ["Enrollment"];

export const enrollmentRouter = createTRPCRouter({
  listTokens: organizationProcedure
    .meta({
      role: "operator",
      openapi: { method: "GET", path: "/enrollment-tokens", tags, summary: "List enrollment tokens" },
    })
    .input(listTokensInput)
    .output(listTokensOutput)
    .query(({ ctx, input }) => listTokens(ctx.tenantDb, input)),

  getToken: organizationProcedure
    .meta({
      role: "operator",
      openapi: { method: "GET", path: "/enrollment-tokens/{id}", tags, summary: "Get an enrollment token" },
    })
    .input(tokenIdInput)
    .output(enrollmentTokenSummary)
    .query(({ ctx, input }) => getToken(ctx.tenantDb, input.id)),

  /** The response carries the token secret and the agent install command, once. */
  createToken: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "enrollmentToken.create", target: "enrollmentToken" },
      openapi: {
        method: "POST",
        path: "/enrollment-tokens",
        tags,
        summary: "Create an enrollment token (shown once)",
      },
    })
    .input(createTokenInput)
    .output(createdToken)
    .mutation(async ({ ctx, input }) => {
      // Asked first: if the gateway cannot say, no token is made that the command could not use.
      const enrollCreds = ctx.gateway ? await fetchEnrollCredentials(ctx.gateway) : null;
      const created = await createToken(
        ctx.db,
        ctx.organization.id,
        `${ctx.actor.type}:${ctx.actor.id}`,
        input,
        { serverUrl: ctx.agentServerUrl ?? DEFAULT_AGENT_SERVER_URL, downloadUrl: ctx.agentDownloadUrl },
        enrollCreds,
      );
      ctx.audit.record({ targetId: created.summary.id, before: null, after: created.summary });
      return { ...created.summary, token: created.token, installCommand: created.installCommand };
    }),

  revokeToken: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "enrollmentToken.revoke", target: "enrollmentToken" },
      openapi: {
        method: "POST",
        path: "/enrollment-tokens/{id}/revoke",
        tags,
        summary: "Revoke an enrollment token",
      },
    })
    .input(tokenIdInput)
    .output(enrollmentTokenSummary)
    .mutation(async ({ ctx, input }) => {
      const { before, after } = await revokeToken(ctx.tenantDb, input.id);
      ctx.audit.record({ targetId: input.id, before, after });
      return after;
    }),

  approveNode: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "node.approve", target: "node" },
      openapi: { method: "POST", path: "/nodes/{nodeId}/approve", tags, summary: "Approve a pending node" },
    })
    .input(nodeIdInput)
    .output(nodeLifecycleOutput)
    .mutation(async ({ ctx, input }) => {
      const { before, after } = await approve(ctx.db, ctx.tenantDb, ctx.organization.id, input.nodeId);
      ctx.audit.record({ targetId: input.nodeId, before, after });
      return after;
    }),

  revokeNode: organizationProcedure
    .meta({
      role: "operator",
      audit: { action: "node.revoke", target: "node" },
      openapi: {
        method: "POST",
        path: "/nodes/{nodeId}/revoke",
        tags,
        summary: "Revoke a node's credentials",
      },
    })
    .input(nodeIdInput)
    .output(nodeLifecycleOutput)
    .mutation(async ({ ctx, input }) => {
      const { before, after } = await revoke(ctx.db, ctx.tenantDb, ctx.organization.id, input.nodeId);
      ctx.audit.record({ targetId: input.nodeId, before, after });
      return after;
    }),
});
