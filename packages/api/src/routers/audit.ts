import { listAudit, listAuditInput, listAuditOutput } from "../domain/audit";
import { createTRPCRouter, organizationProcedure } from "../trpc";

export const auditRouter = createTRPCRouter({
  /** Newest first, filtered by actor, action, target and time range; cursor pagination. */
  list: organizationProcedure
    .meta({
      role: "admin",
      openapi: { method: "GET", path: "/audit", tags: ["Audit log"], summary: "List audit log entries" },
    })
    .input(listAuditInput)
    .output(listAuditOutput)
    .query(({ ctx, input }) => listAudit(ctx.tenantDb, input)),
});
