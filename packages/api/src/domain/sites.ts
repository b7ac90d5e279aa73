/**
 * Sites of one organization: list with node counts per status (fleet overview), detail,
 * create/update/delete, and the leaf-node bundle (config + credentials minted by the gateway).
 */
import { posix } from "node:path";
import { Prisma } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { type GatewayConnection, requestLeafBundle } from "../gateway-client";
import {
  createSiteInput,
  LEAF_CREDENTIALS_PATH,
  leafBundleInput,
  siteIdInput,
  siteName,
  updateSiteInput,
} from "../schemas/sites";
import { bumpAlertingRevision } from "./alert-policies";
import { type NodeStatus, nodeStatusSchema, type TenantDb } from "./nodes";

// Input schemas live in ../schemas (zod only) so the console can validate with them too.
export { createSiteInput, LEAF_CREDENTIALS_PATH, leafBundleInput, siteIdInput, siteName, updateSiteInput };

/** Default place of the site credentials on the leaf machine (leaf.conf next to it). */

export const siteSummary = z.object({
  id: z.string().nullable(),
  /** null for the nodes that belong to no site. */
  name: z.string().nullable(),
  description: z.string().nullable(),
  total: z.number().int(),
  byStatus: z.record(nodeStatusSchema, z.number().int()),
});
export const listSitesOutput = z.array(siteSummary);

/** Every site (also those without nodes), then a row for site-less nodes if there are any. */
export async function listSitesWithCounts(db: TenantDb): Promise<z.infer<typeof listSitesOutput>> {
  const [sites, groups] = await Promise.all([
    db.site.findMany({ orderBy: { name: "asc" }, select: { id: true, name: true, description: true } }),
    db.node.groupBy({ by: ["siteId", "status"], _count: { _all: true } }),
  ]);
  const empty = (): Record<NodeStatus, number> => ({ pending: 0, online: 0, offline: 0, revoked: 0 });
  const countsBySite = new Map<string | null, Record<NodeStatus, number>>();
  for (const group of groups) {
    const counts = countsBySite.get(group.siteId) ?? empty();
    counts[group.status] += group._count._all;
    countsBySite.set(group.siteId, counts);
  }
  const row = (id: string | null, name: string | null, description: string | null) => {
    const byStatus = countsBySite.get(id) ?? empty();
    return { id, name, description, byStatus, total: Object.values(byStatus).reduce((a, b) => a + b, 0) };
  };
  const rows = sites.map((site) => row(site.id, site.name, site.description));
  if (countsBySite.has(null)) rows.push(row(null, null, null));
  return rows;
}

export const siteDetail = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  /** IANA zone; null: UTC. */
  timeZone: z.string().nullable(),
  total: z.number().int(),
  byStatus: z.record(nodeStatusSchema, z.number().int()),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type SiteDetail = z.infer<typeof siteDetail>;

const siteSelect = {
  id: true,
  name: true,
  description: true,
  timeZone: true,
  createdAt: true,
  updatedAt: true,
} as const;

function notFound(id: string): never {
  throw new TRPCError({ code: "NOT_FOUND", message: `site ${id} not found` });
}

function nameTaken(error: unknown, name: string | undefined): never {
  if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
    throw new TRPCError({ code: "CONFLICT", message: `a site named "${name}" already exists`, cause: error });
  }
  if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2025") {
    throw new TRPCError({ code: "NOT_FOUND", message: "site not found", cause: error });
  }
  throw error;
}

/** One site with its node counts per status; NOT_FOUND for an unknown or foreign id. */
export async function getSite(db: TenantDb, id: string): Promise<SiteDetail> {
  const [site, groups] = await Promise.all([
    db.site.findFirst({ where: { id }, select: siteSelect }),
    db.node.groupBy({ by: ["status"], where: { siteId: id }, _count: { _all: true } }),
  ]);
  if (!site) notFound(id);
  const byStatus: Record<NodeStatus, number> = { pending: 0, online: 0, offline: 0, revoked: 0 };
  for (const group of groups) byStatus[group.status] = group._count._all;
  return { ...site, byStatus, total: Object.values(byStatus).reduce((a, b) => a + b, 0) };
}

export async function createSite(
  db: TenantDb,
  organizationId: string,
  input: z.output<typeof createSiteInput>,
) {
  try {
    const site = await db.site.create({
      data: {
        organizationId,
        name: input.name,
        description: input.description || null,
        timeZone: input.timeZone ?? null,
      },
      select: { id: true },
    });
    return getSite(db, site.id);
  } catch (error) {
    nameTaken(error, input.name);
  }
}

export async function updateSite(db: TenantDb, input: z.output<typeof updateSiteInput>) {
  const before = await getSite(db, input.id);
  try {
    await db.site.update({
      where: { id: input.id },
      data: {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description || null } : {}),
        ...(input.timeZone !== undefined ? { timeZone: input.timeZone } : {}),
      },
    });
  } catch (error) {
    nameTaken(error, input.name);
  }
  if (input.timeZone !== undefined && input.timeZone !== before.timeZone) {
    // Quiet hours are in the site's zone: the Alertmanager config follows.
    const site = await db.site.findFirst({
      where: { id: input.id },
      select: { organizationId: true, quietHoursStart: true },
    });
    if (site?.quietHoursStart) await bumpAlertingRevision(db, site.organizationId);
  }
  return { before, after: await getSite(db, input.id) };
}

/**
 * Deletes a site that has no nodes. A site with nodes is refused (CONFLICT), never detached
 * silently: its nodes' placement (and the `site` selector users rely on) would change behind
 * the operator's back. Move or delete the nodes first.
 */
export async function deleteSite(
  db: TenantDb,
  id: string,
  revokeCredentials: (siteId: string) => Promise<unknown>,
) {
  const before = await getSite(db, id);
  if (before.total > 0) {
    throw new TRPCError({
      code: "CONFLICT",
      message: `site ${before.name} still has ${before.total} node${before.total === 1 ? "" : "s"}: move or delete them first`,
    });
  }
  // An alert policy limited to this site would silently widen to every site (the FK refuses too).
  const policies = await db.alertPolicy.count({ where: { siteId: id } });
  if (policies > 0) {
    throw new TRPCError({
      code: "CONFLICT",
      message: `site ${before.name} is the scope of ${policies} alert polic${policies === 1 ? "y" : "ies"}: change or delete them first`,
    });
  }
  try {
    // Tokens that placed nodes here keep working, placing new nodes at no site (their labels stay).
    await db.enrollmentToken.updateMany({ where: { siteId: id }, data: { siteId: null } });
    await db.site.delete({ where: { id } });
    // Its leaf's credentials stop working (the gateway re-issues the account JWT at commit).
    await revokeCredentials(id);
  } catch (error) {
    // A node assigned between the count and the delete: the foreign key refuses (P2003).
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2003") {
      throw new TRPCError({
        code: "CONFLICT",
        message: `site ${before.name} got nodes meanwhile`,
        cause: error,
      });
    }
    nameTaken(error, undefined);
  }
  return before;
}

export const leafBundleOutput = z.object({
  siteId: z.string(),
  siteName: z.string(),
  files: z.array(z.object({ name: z.string(), content: z.string(), secret: z.boolean() })),
  /** How to run it, for the operator. */
  runCommand: z.string(),
  /** When site.creds stops working: download a new bundle before (which revokes this one). */
  expiresAt: z.date().nullable(),
});

/**
 * A fresh leaf bundle for one of the organization's sites. The tenant check happens here,
 * before the gateway is asked; every call mints new site credentials that expire, and revokes
 * the site's earlier ones (a leaf still running an older bundle is disconnected).
 */
export async function siteLeafBundle(
  db: TenantDb,
  gateway: GatewayConnection | null,
  organizationId: string,
  input: z.output<typeof leafBundleInput>,
): Promise<z.infer<typeof leafBundleOutput>> {
  const site = await getSite(db, input.id);
  const bundle = await requestLeafBundle(gateway, {
    organizationId,
    siteId: site.id,
    listen: input.listen,
    credentialsPath: input.credentialsPath,
    siteCache: input.siteCache
      ? { storeDir: input.siteCacheDir, maxBytes: input.siteCacheMaxMiB * 1024 * 1024 }
      : null,
  });
  const configPath = posix.join(posix.dirname(input.credentialsPath), "leaf.conf");
  return {
    siteId: site.id,
    siteName: site.name,
    files: [
      { name: "leaf.conf", content: bundle.config, secret: false },
      { name: "site.creds", content: bundle.creds, secret: true },
      // The site's system link is secret; the enrollment credentials are public.
      ...Object.entries(bundle.companions).map(([name, content]) => ({
        name,
        content,
        secret: name !== "enroll.creds",
      })),
    ],
    runCommand: `nats-server -c ${configPath}`,
    expiresAt: bundle.expiresAt ?? null,
  };
}
