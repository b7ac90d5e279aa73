import { revokeSiteCredentials } from "@edgefleet/db";
import { siteProbes, siteProbesInput, siteProbesOutput } from "../domain/network-probes";
import {
  createSite,
  createSiteInput,
  deleteSite,
  getSite,
  leafBundleInput,
  leafBundleOutput,
  listSitesOutput,
  listSitesWithCounts,
  siteDetail,
  siteIdInput,
  siteLeafBundle,
  updateSite,
  updateSiteInput,
} from "../domain/sites";
import { createTRPCRouter, organizationProcedure } from "../trpc";

const tags = ["Sites"];

export const siteRouter = createTRPCRouter({
  /** The active organization's sites with node counts per status. */
  list: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/sites", tags, summary: "List sites with node counts" } })
    .output(listSitesOutput)
    .query(({ ctx }) => listSitesWithCounts(ctx.tenantDb)),

  byId: organizationProcedure
    .meta({ openapi: { method: "GET", path: "/sites/{id}", tags, summary: "A site with node counts" } })
    .input(siteIdInput)
    .output(siteDetail)
    .query(({ ctx, input }) => getSite(ctx.tenantDb, input.id)),

  create: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "site.create", target: "site" },
      openapi: { method: "POST", path: "/sites", tags, summary: "Create a site" },
    })
    .input(createSiteInput)
    .output(siteDetail)
    .mutation(({ ctx, input }) => createSite(ctx.tenantDb, ctx.organization.id, input)),

  update: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "site.update", target: "site" },
      openapi: { method: "PATCH", path: "/sites/{id}", tags, summary: "Rename or describe a site" },
    })
    .input(updateSiteInput)
    .output(siteDetail)
    .mutation(async ({ ctx, input }) => {
      const { before, after } = await updateSite(ctx.tenantDb, input);
      ctx.audit.record({ targetId: input.id, before, after });
      return after;
    }),

  /** Refused (CONFLICT) while nodes are assigned to the site. */
  delete: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "site.delete", target: "site" },
      openapi: { method: "DELETE", path: "/sites/{id}", tags, summary: "Delete a site without nodes" },
    })
    .input(siteIdInput)
    .output(siteDetail)
    .mutation(async ({ ctx, input }) => {
      const before = await deleteSite(ctx.tenantDb, input.id, (siteId) =>
        revokeSiteCredentials(ctx.db, ctx.organization.id, siteId),
      );
      ctx.audit.record({ targetId: input.id, before, after: null });
      return before;
    }),

  /**
   * leaf.conf and site.creds for the site's NATS leaf node. A mutation, audited: every call
   * mints new site credentials (the audit row records that, never the credentials).
   */
  leafBundle: organizationProcedure
    .meta({
      role: "admin",
      audit: { action: "site.leafBundle", target: "site" },
      openapi: {
        method: "POST",
        path: "/sites/{id}/leaf-bundle",
        tags,
        summary: "Mint a leaf-node config and credentials for a site",
      },
    })
    .input(leafBundleInput)
    .output(leafBundleOutput)
    .mutation(async ({ ctx, input }) => {
      const bundle = await siteLeafBundle(ctx.tenantDb, ctx.gateway, ctx.organization.id, input);
      ctx.audit.record({
        targetId: input.id,
        before: null,
        after: {
          minted: "site leaf credentials",
          listen: input.listen,
          credentialsPath: input.credentialsPath,
          siteCache: input.siteCache ? { dir: input.siteCacheDir, maxMiB: input.siteCacheMaxMiB } : null,
        },
      });
      return bundle;
    }),

  /** The site's nodes compared: each one's latest throughput probes to its leaf and to the hub. */
  probes: organizationProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/sites/{id}/probes",
        tags,
        summary: "Throughput probes of a site's nodes, side by side",
      },
    })
    .input(siteProbesInput)
    .output(siteProbesOutput)
    .query(({ ctx, input }) => siteProbes(ctx.tenantDb, input)),
});
