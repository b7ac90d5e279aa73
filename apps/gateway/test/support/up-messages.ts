import type { MetricsReport } from "@edgefleet/agent-sdk/protocol";

/** A valid MetricsReport of an idle host, as an agent sends it; `overrides` replace fields. */
export function metricsReportBody(seq: number, overrides: Partial<MetricsReport> = {}): MetricsReport {
  return {
    v: 1,
    seq,
    at: Date.now(),
    cpu: 10,
    mu: 1,
    mt: 2,
    du: 1,
    dt: 2,
    net: [],
    apps: [],
    ctl: {},
    ...overrides,
  };
}
