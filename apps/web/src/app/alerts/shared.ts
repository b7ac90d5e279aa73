/** Badge colours of alert severities and states (the node status colours, by meaning). */
export function severityVariant(severity: string) {
  return severity === "critical" ? "offline" : severity === "warning" ? "degraded" : "secondary";
}

export function firingStateVariant(state: string) {
  return state === "active" ? "offline" : "outline";
}

/** Firing alerts, silences and quiet hours move while someone watches: every list polls (query options). */
export const ALERTS_POLLING = { refetchInterval: 5_000 };
