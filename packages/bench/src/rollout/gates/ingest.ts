/**
 * How far behind the product's metrics are: the gateway's backlog of edge messages (the EF_UP
 * stream's consumer, on the hub's /jsz) and the age of the newest per-app sample in Mimir. A gate
 * judges the window that ends when it is due; samples still queued then are not in its verdict.
 */
import { consumerBacklog } from "../../nats-monitor.js";

export interface IngestSample {
  at: number;
  /** Edge messages (metrics, status) the gateway has not acknowledged yet. */
  backlog: number | null;
  /** Seconds between `at` and the newest per-app sample in Mimir. */
  lagSeconds: number | null;
}

export async function sampleIngest(input: {
  monitorUrl: string;
  mimirUrl: string;
  organizationId: string;
  app: string;
}): Promise<IngestSample> {
  const at = Date.now();
  const backlog = await consumerBacklog(input.monitorUrl, "EF_UP").catch(() => null);
  const query = `max(timestamp(edgefleet_app_cpu_usage_ratio{app=${JSON.stringify(input.app)}}))`;
  const newest = await fetch(
    new URL(`/prometheus/api/v1/query?query=${encodeURIComponent(query)}`, input.mimirUrl),
    {
      headers: { "X-Scope-OrgID": input.organizationId },
      signal: AbortSignal.timeout(10_000),
    },
  )
    .then(
      (response) => response.json() as Promise<{ data?: { result?: Array<{ value?: [number, string] }> } }>,
    )
    .then((answer) => Number(answer.data?.result?.[0]?.value?.[1] ?? Number.NaN))
    .catch(() => Number.NaN);
  return { at, backlog, lagSeconds: Number.isFinite(newest) ? Math.max(0, at / 1000 - newest) : null };
}

/** The sample nearest to `at` (null without samples). */
export function ingestAt(samples: readonly IngestSample[], at: number): IngestSample | null {
  let best: IngestSample | null = null;
  for (const sample of samples)
    if (best === null || Math.abs(sample.at - at) < Math.abs(best.at - at)) best = sample;
  return best;
}

/** Caught up: the newest sample is younger than `maxLagSeconds` (a report or two in flight). */
export function caughtUp(sample: IngestSample, maxLagSeconds: number): boolean {
  return sample.lagSeconds !== null && sample.lagSeconds <= maxLagSeconds;
}
