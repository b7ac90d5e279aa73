/**
 * Service level indicators an organization can see for itself (issue 16): the series the web
 * server and the gateway write to Mimir per organization (tenant = organization id), the
 * objectives, and the PromQL that reads them back. Histograms are Prometheus-style cumulative
 * buckets, so any p99 over any window is `histogram_quantile` of their rates.
 */

/** Seconds the web server took for a tRPC or REST call of the organization (`kind`: query/mutation). */
export const API_LATENCY_SERIES = "edgefleet_api_request_duration_seconds";
/** Desired version committed → the agent reports the app running on it (gateway, per instance). */
export const DESIRED_TO_RUNNING_SERIES = "edgefleet_desired_to_running_seconds";
/** The agent's Hello answered → the node online in Postgres (gateway's liveness flush). */
export const CONNECT_TO_ONLINE_SERIES = "edgefleet_connect_to_online_seconds";

/** Upper bounds (seconds) of the buckets: around the 1 s and 5 s objectives. */
export const SLO_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60] as const;

export const SLO_OBJECTIVES = {
  /** API p99 for single-object calls (the Kubernetes API SLO KubeEdge used). */
  apiP99Seconds: 1,
  /** desired → running p99 (the Kubernetes pod-startup SLO). */
  desiredToRunningP99Seconds: 5,
  connectToOnlineP99Seconds: 5,
  /** Idle uplink ≤ 0.05 kbit/s per node = 16.2 MB a month (30 days). */
  bytesPerNodePerMonth: (0.05 * 1000 * 30 * 86_400) / 8,
} as const;

interface RemoteWriteSeries {
  labels: { __name__: string; [label: string]: string };
  samples: Array<{ value: number; timestamp: number }>;
}

interface Histogram {
  buckets: number[];
  count: number;
  sum: number;
  /** When the first observation came (ms); its series start with a zero sample just before. */
  startedAt: number;
  /** The zero sample went out: rate() sees the first observations as an increase, not as a start. */
  announced: boolean;
}

/**
 * Cumulative latency histograms per organization and label set, in memory; `series()` is what to
 * push now (a new series' first push also carries a zero sample before its first observation) (every histogram as it stands, so a lost push loses no counts: the next one carries
 * them). Bounded: at most `maxKeys` organization × label combinations (the rest are dropped).
 */
export class OrgHistograms {
  private readonly byOrg = new Map<string, Map<string, { labels: Record<string, string>; h: Histogram }>>();
  private keys = 0;

  constructor(
    readonly name: string,
    private readonly maxKeys = 10_000,
  ) {}

  observe(organizationId: string, seconds: number, labels: Record<string, string> = {}): void {
    if (!Number.isFinite(seconds) || seconds < 0) return;
    let org = this.byOrg.get(organizationId);
    const key = JSON.stringify(labels);
    let entry = org?.get(key);
    if (!entry) {
      if (this.keys >= this.maxKeys) return;
      if (!org) {
        org = new Map();
        this.byOrg.set(organizationId, org);
      }
      entry = {
        labels,
        h: { buckets: SLO_BUCKETS.map(() => 0), count: 0, sum: 0, startedAt: Date.now(), announced: false },
      };
      org.set(key, entry);
      this.keys++;
    }
    const { h } = entry;
    for (let i = 0; i < SLO_BUCKETS.length; i++)
      if (seconds <= (SLO_BUCKETS[i] as number)) h.buckets[i] = (h.buckets[i] ?? 0) + 1;
    h.count++;
    h.sum += seconds;
  }

  organizations(): string[] {
    return [...this.byOrg.keys()];
  }

  /** The organization's histograms as remote-write series at `timestamp` (ms). */
  series(organizationId: string, timestamp: number): RemoteWriteSeries[] {
    const out: RemoteWriteSeries[] = [];
    for (const { labels, h } of this.byOrg.get(organizationId)?.values() ?? []) {
      // A counter's first sample is not an increase to rate(): lead a new series in with a zero.
      const zero = h.announced ? [] : [{ value: 0, timestamp: Math.min(h.startedAt, timestamp) - 1 }];
      const sample = (value: number) => [...zero, { value, timestamp }];
      SLO_BUCKETS.forEach((le, i) => {
        out.push({
          labels: { __name__: `${this.name}_bucket`, ...labels, le: String(le) },
          samples: sample(h.buckets[i] ?? 0),
        });
      });
      out.push({
        labels: { __name__: `${this.name}_bucket`, ...labels, le: "+Inf" },
        samples: sample(h.count),
      });
      out.push({ labels: { __name__: `${this.name}_count`, ...labels }, samples: sample(h.count) });
      out.push({ labels: { __name__: `${this.name}_sum`, ...labels }, samples: sample(h.sum) });
      h.announced = true;
    }
    return out;
  }
}

/** PromQL of the SLO page, over `window` (e.g. "1h"); the tenant header scopes it to one organization. */
export function sloQueries(window: string) {
  const p99 = (name: string, by = "") =>
    `histogram_quantile(0.99, sum by (le${by}) (rate(${name}_bucket[${window}])))`;
  return {
    apiP99: p99(API_LATENCY_SERIES),
    apiCalls: `sum(increase(${API_LATENCY_SERIES}_count[${window}]))`,
    desiredToRunningP99: p99(DESIRED_TO_RUNNING_SERIES),
    desiredToRunningCount: `sum(increase(${DESIRED_TO_RUNNING_SERIES}_count[${window}]))`,
    connectToOnlineP99: p99(CONNECT_TO_ONLINE_SERIES),
    connectToOnlineCount: `sum(increase(${CONNECT_TO_ONLINE_SERIES}_count[${window}]))`,
    // What the organization's agents sent over the control link, per node, scaled to 30 days.
    bytesPerNodePerMonth: `sum(rate(edgefleet_node_control_bytes_total{direction="sent"}[${window}])) / count(count by (node) (edgefleet_node_control_bytes_total)) * 2592000`,
  };
}
