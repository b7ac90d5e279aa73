import { z } from "zod";
import { labelSelector } from "./labels";

export const nodeStatuses = ["pending", "online", "offline", "revoked"] as const;
export const nodeStatusSchema = z.enum(nodeStatuses);
export type NodeStatus = z.infer<typeof nodeStatusSchema>;

export const NODE_PAGE_MAX = 200;
export const nodeSortFields = ["name", "status", "lastSeenAt", "agentVersion"] as const;
export type NodeSortField = (typeof nodeSortFields)[number];

export const listNodesInput = z.object({
  limit: z.number().int().min(1).max(NODE_PAGE_MAX).default(50),
  /** Opaque: returned as `nextCursor`, only valid with the same sort. */
  cursor: z.string().min(1).max(1000).nullish(),
  /** Free text matched (case-insensitively) against the node name and its site name. */
  search: z.string().trim().max(100).optional(),
  status: nodeStatusSchema.optional(),
  /** Kubernetes-style label selector, e.g. `site=plant-7,tier!=canary` (see selectors.ts). */
  selector: z.string().max(1000).optional(),
  sort: z
    .object({ field: z.enum(nodeSortFields), direction: z.enum(["asc", "desc"]).default("asc") })
    .default({ field: "name", direction: "asc" }),
});
export type ListNodesInput = z.input<typeof listNodesInput>;

/**
 * The node list's filters as the console's filter form holds them: text, "" for none. The same
 * rules as `listNodesInput`, and the selector must parse (the server would refuse it).
 */
export const nodeFilters = z.object({
  selector: labelSelector,
  search: z.string().trim().max(100),
  status: z.union([z.literal(""), nodeStatusSchema]),
});

/** Moves one node to another site of the organization, or to none (`siteId` null). */
export const moveNodeInput = z.object({ id: z.uuid(), siteId: z.uuid().nullable() });
