import { pushTimeseries } from "prometheus-remote-write";
import type { EdgeMetrics } from "../edge-metrics.js";
import type { Series } from "./mimir-series.js";

const WRITE_TIMEOUT_MS = 10_000;

/** done: stored (or refused for good: retrying cannot help); retry: try again later. */
export type MimirWriteResult = { outcome: "done" } | { outcome: "rejected" | "retry"; detail: string };

/**
 * Prometheus remote write (protobuf + snappy, by prometheus-remote-write) to
 * `$MIMIR_URL/api/v1/push`, one request per tenant: X-Scope-OrgID = organization id.
 */
export class MimirWriter {
  private readonly url: string;

  constructor(
    mimirUrl: string,
    private readonly metrics: EdgeMetrics,
  ) {
    this.url = new URL("/api/v1/push", mimirUrl).toString();
  }

  async write(organizationId: string, series: Series[]): Promise<MimirWriteResult> {
    if (series.length === 0) return { outcome: "done" };
    const stopTimer = this.metrics.mimirWriteSeconds.startTimer();
    try {
      const result = await pushTimeseries(series, {
        url: this.url,
        headers: {
          "Content-Encoding": "snappy",
          "X-Prometheus-Remote-Write-Version": "0.1.0",
          "X-Scope-OrgID": organizationId,
        },
        fetch: (url, init) =>
          fetch(url, {
            method: init?.method ?? "POST",
            headers: init?.headers,
            // snappyjs returns a Uint8Array (typed ArrayBufferLike by the library).
            body: init?.body as unknown as Uint8Array,
            signal: AbortSignal.timeout(WRITE_TIMEOUT_MS),
          }),
      });
      if (result.status >= 200 && result.status < 300) {
        this.metrics.mimirWrites.inc({ result: "ok" });
        this.metrics.mimirSamples.inc(series.reduce((sum, one) => sum + one.samples.length, 0));
        return { outcome: "done" };
      }
      const detail = `${result.status} ${result.statusText}: ${(result.errorMessage ?? "").slice(0, 300)}`;
      // 429 (rate limit) and 5xx are Mimir's trouble: retry. Other 4xx are about the samples
      // (out of order, too old, bad labels): Mimir stored what it could, retrying changes nothing.
      if (result.status === 429 || result.status >= 500) {
        this.metrics.mimirWrites.inc({ result: "retry" });
        return { outcome: "retry", detail };
      }
      this.metrics.mimirWrites.inc({ result: "rejected" });
      return { outcome: "rejected", detail };
    } catch (error) {
      this.metrics.mimirWrites.inc({ result: "retry" });
      return { outcome: "retry", detail: error instanceof Error ? error.message : String(error) };
    } finally {
      stopTimer();
    }
  }
}
