/** One node with everything its detail page shows: identity, labels, lifecycle times, app instances. */
import { z } from "zod";
import { degradedReasons, labelsSchema, nodeStatusSchema, type TenantDb } from "./nodes";

export const nodeByIdInput = z.object({ id: z.uuid({ error: "node id must be a UUID" }) });

const appInstanceSchema = z.object({
  id: z.string(),
  app: z.string(),
  desiredVersion: z.string(),
  observedVersion: z.string().nullable(),
  state: z.enum(["pending", "pulling", "starting", "running", "failed", "stopped"]),
  reason: z.string().nullable(),
  restarts: z.number().int(),
  updatedAt: z.date(),
});

export const nodeDetailOutput = z.object({
  id: z.string(),
  name: z.string(),
  site: z.object({ id: z.string(), name: z.string() }).nullable(),
  status: nodeStatusSchema,
  labels: labelsSchema,
  agentVersion: z.string().nullable(),
  publicKey: z.string().nullable(),
  enrolledAt: z.date(),
  lastSeenAt: z.date().nullable(),
  revokedAt: z.date().nullable(),
  desiredRevision: z.number().int(),
  appliedRevision: z.number().int(),
  apps: z.array(appInstanceSchema),
  /** Why the node is degraded (see degradedNodeWhere in nodes.ts); empty when it is not. */
  degradedReasons: z.array(z.string()),
});
export type NodeDetail = z.infer<typeof nodeDetailOutput>;

/** null when the node does not exist in this organization (another tenant's id included). */
export async function getNodeDetail(db: TenantDb, id: string): Promise<NodeDetail | null> {
  const node = await db.node.findFirst({
    where: { id },
    include: {
      site: { select: { id: true, name: true } },
      appInstances: {
        include: {
          app: { select: { name: true } },
          desiredVersion: { select: { version: true } },
          observedVersion: { select: { version: true } },
        },
      },
    },
  });
  if (!node) return null;
  const detail = {
    id: node.id,
    name: node.name,
    site: node.site,
    status: node.status,
    labels: labelsSchema.parse(node.labels),
    agentVersion: node.agentVersion,
    publicKey: node.publicKey,
    enrolledAt: node.enrolledAt,
    lastSeenAt: node.lastSeenAt,
    revokedAt: node.revokedAt,
    desiredRevision: node.desiredRevision,
    appliedRevision: node.appliedRevision,
    apps: node.appInstances
      .map((instance) => ({
        id: instance.id,
        app: instance.app.name,
        desiredVersion: instance.desiredVersion.version,
        observedVersion: instance.observedVersion?.version ?? null,
        state: instance.state,
        reason: instance.reason,
        restarts: instance.restarts,
        updatedAt: instance.updatedAt,
      }))
      .sort((a, b) => a.app.localeCompare(b.app)),
  };
  return { ...detail, degradedReasons: degradedReasons(detail) };
}
