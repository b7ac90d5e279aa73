import { Badge } from "./ui/badge";

export type NodeStatus = "pending" | "online" | "offline" | "revoked";

export function StatusBadge({ status }: { status: NodeStatus }) {
  return <Badge variant={status}>{status}</Badge>;
}
