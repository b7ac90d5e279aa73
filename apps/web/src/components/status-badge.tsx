import { Badge } from "./ui/badge";

export type NodeStatus = "pending" | "online" | "offline" | "revoked";

/** The node statuses in the order counts show them, each with the text colour of its number. */
export const NODE_STATUS_COLOURS = [
  { status: "online", className: "text-online" },
  { status: "offline", className: "text-offline" },
  { status: "pending", className: "text-pending" },
  { status: "revoked", className: "text-revoked" },
] as const satisfies ReadonlyArray<{ status: NodeStatus; className: string }>;

export function StatusBadge({ status }: { status: NodeStatus }) {
  return <Badge variant={status}>{status}</Badge>;
}
