/**
 * Pushes per-organization latency histograms (OrgHistograms) to Mimir by remote write, one
 * request per organization (X-Scope-OrgID = its id), every `intervalMs`. The histograms are
 * cumulative, so a failed push loses nothing: the next one carries the counts.
 */
import type { OrgHistograms } from "@edgefleet/alerts";
import { pushTimeseries } from "prometheus-remote-write";

export interface HistogramPusher {
  /** Pushes now (tests; and the last push on shutdown). */
  flush(): Promise<void>;
  stop(): void;
}

export function startHistogramPusher(
  histograms: OrgHistograms,
  mimirUrl: string,
  intervalMs = 15_000,
): HistogramPusher {
  const url = new URL("/api/v1/push", mimirUrl).toString();
  let pushing: Promise<void> | null = null;
  const flush = () => {
    pushing ??= (async () => {
      const now = Date.now();
      for (const organizationId of histograms.organizations()) {
        const series = histograms.series(organizationId, now);
        if (series.length === 0) continue;
        try {
          await pushTimeseries(series, {
            url,
            headers: {
              "Content-Encoding": "snappy",
              "X-Prometheus-Remote-Write-Version": "0.1.0",
              "X-Scope-OrgID": organizationId,
            },
            fetch: (target, init) =>
              fetch(target, {
                method: init?.method ?? "POST",
                headers: init?.headers,
                body: init?.body as unknown as RequestInit["body"],
                signal: AbortSignal.timeout(10_000),
              }),
          });
        } catch {
          // Mimir away: the cumulative counts go with the next push.
        }
      }
    })().finally(() => {
      pushing = null;
    });
    return pushing;
  };
  const timer = setInterval(() => void flush(), intervalMs);
  timer.unref();
  return { flush, stop: () => clearInterval(timer) };
}
