import { Registry } from "prom-client";
import { deserialize } from "prometheus-remote-write";
import SnappyJS from "snappyjs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createEdgeMetrics } from "../../src/edge/edge-metrics.js";
import type { Series } from "../../src/edge/ingest/mimir-series.js";
import { MimirWriter } from "../../src/edge/ingest/mimir-writer.js";

const series: Series[] = [
  {
    labels: { __name__: "edgefleet_node_cpu_usage_ratio", org: "org-1", node: "node-1" },
    samples: [{ value: 0.25, timestamp: 1_767_225_600_000 }],
  },
];

function stubMimir(reply: () => Response) {
  const requests: Array<{ url: string; init: RequestInit }> = [];
  vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
    requests.push({ url, init });
    return reply();
  });
  return requests;
}

describe("MimirWriter", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("posts a snappy-compressed WriteRequest to /api/v1/push with the tenant", async () => {
    const requests = stubMimir(() => new Response(null, { status: 200 }));
    const writer = new MimirWriter("http://mimir:9009", createEdgeMetrics(new Registry()));
    expect(await writer.write("org-1", series)).toEqual({ outcome: "done" });
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request?.url).toBe("http://mimir:9009/api/v1/push");
    expect(request?.init.headers).toMatchObject({
      "Content-Type": "application/x-protobuf",
      "Content-Encoding": "snappy",
      "X-Prometheus-Remote-Write-Version": "0.1.0",
      "X-Scope-OrgID": "org-1",
    });
    const decoded = (await deserialize(
      SnappyJS.uncompress(request?.init.body as Uint8Array) as never,
    )) as unknown as {
      timeseries: Array<{
        labels: Array<{ name: string; value: string }>;
        samples: Array<{ value: number }>;
      }>;
    };
    expect(decoded.timeseries).toHaveLength(1);
    expect(decoded.timeseries[0]?.labels.map((label) => [label.name, label.value])).toEqual([
      ["__name__", "edgefleet_node_cpu_usage_ratio"],
      ["org", "org-1"],
      ["node", "node-1"],
    ]);
    expect(decoded.timeseries[0]?.samples[0]?.value).toBe(0.25);
  });

  it.each([
    [400, "rejected"],
    [429, "retry"],
    [503, "retry"],
  ] as const)("reads a %i as %s, with Mimir's words", async (status, outcome) => {
    stubMimir(() => new Response("out of order sample", { status, statusText: "Nope" }));
    const writer = new MimirWriter("http://mimir:9009", createEdgeMetrics(new Registry()));
    expect(await writer.write("org-1", series)).toEqual({
      outcome,
      detail: `${status} Nope: out of order sample`,
    });
  });

  it("retries when Mimir cannot be reached, and sends nothing for no series", async () => {
    const requests = stubMimir(() => {
      throw new Error("connect ECONNREFUSED");
    });
    const writer = new MimirWriter("http://mimir:9009", createEdgeMetrics(new Registry()));
    expect(await writer.write("org-1", series)).toEqual({ outcome: "retry", detail: "connect ECONNREFUSED" });
    expect(await writer.write("org-1", [])).toEqual({ outcome: "done" });
    expect(requests).toHaveLength(1);
  });
});
