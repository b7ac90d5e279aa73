import protobuf from "protobufjs";
import SnappyJS from "snappyjs";
import type { EdgeMetrics } from "../edge-metrics.js";
import type { Series } from "./mimir-series.js";

const WRITE_TIMEOUT_MS = 10_000;

/**
 * The part of Prometheus remote write 1.0 (prompb remote.proto, types.proto) that the gateway
 * sends. `labels` is declared as map<string, string>, which protobuf defines as the same bytes on
 * the wire as prompb's `repeated Label labels = 1` with Label { name = 1; value = 2 } (protobuf
 * language guide, "Maps", backwards compatibility): protobufjs then encodes a Series' label object
 * as it is, in its key order, with no { name, value } copy of every label.
 */
const WriteRequest = protobuf
  .parse(`
    syntax = "proto3";
    package prometheus;
    message WriteRequest { repeated TimeSeries timeseries = 1; }
    message TimeSeries { map<string, string> labels = 1; repeated Sample samples = 2; }
    message Sample { double value = 1; int64 timestamp = 2; }
  `)
  .root.lookupType("prometheus.WriteRequest");

/**
 * Series encoded at a time. protobufjs keeps an object for every field written until finish():
 * for a whole batch (90,000 series for 2,000 reports) they outlived the young generation and
 * garbage collection took most of the encoding time. A chunk's die young.
 */
const SERIES_PER_CHUNK = 256;

/**
 * The body of a remote-write request: a snappy-compressed (block format) WriteRequest. Chunks are
 * encoded apart and concatenated, which protobuf defines as one message with the repeated field's
 * elements appended ("Merging" in the encoding guide): the same bytes as encoding all at once.
 */
export function encodeWriteRequest(series: readonly Series[]): Uint8Array {
  const chunks: Uint8Array[] = [];
  for (let start = 0; start < series.length; start += SERIES_PER_CHUNK) {
    chunks.push(WriteRequest.encode({ timeseries: series.slice(start, start + SERIES_PER_CHUNK) }).finish());
  }
  return SnappyJS.compress(Buffer.concat(chunks));
}

/** done: stored (or refused for good: retrying cannot help); retry: try again later. */
export type MimirWriteResult = { outcome: "done" } | { outcome: "rejected" | "retry"; detail: string };

/**
 * Prometheus remote write (protobuf + snappy, encodeWriteRequest) to `$MIMIR_URL/api/v1/push`,
 * one request per tenant: X-Scope-OrgID = organization id.
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
      const response = await fetch(this.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/x-protobuf",
          "Content-Encoding": "snappy",
          "X-Prometheus-Remote-Write-Version": "0.1.0",
          "X-Scope-OrgID": organizationId,
        },
        body: encodeWriteRequest(series),
        signal: AbortSignal.timeout(WRITE_TIMEOUT_MS),
      });
      const text = await response.text();
      if (response.status >= 200 && response.status < 300) {
        this.metrics.mimirWrites.inc({ result: "ok" });
        this.metrics.mimirSamples.inc(series.reduce((sum, one) => sum + one.samples.length, 0));
        return { outcome: "done" };
      }
      const detail = `${response.status} ${response.statusText}: ${text.slice(0, 300)}`;
      // 429 (rate limit) and 5xx are Mimir's trouble: retry. Other 4xx are about the samples
      // (out of order, too old, bad labels): Mimir stored what it could, retrying changes nothing.
      if (response.status === 429 || response.status >= 500) {
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
