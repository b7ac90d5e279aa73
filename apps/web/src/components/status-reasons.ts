/** Plain words for the reasons a node's status changed (node_status_event.reason). */
export const STATUS_REASON_TEXT: Record<string, string> = {
  hello: "connected",
  heartbeat: "heartbeats resumed",
  heartbeat_timeout: "heartbeats stopped",
  disconnected: "connection closed",
  enrolled: "enrolled",
  approved: "approved",
  revoked: "revoked",
};

export function statusReasonText(reason: string): string {
  return STATUS_REASON_TEXT[reason] ?? reason;
}
