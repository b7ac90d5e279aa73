import { describe, expect, it } from "vitest";
import {
  firstFiringByNode,
  firstZeroAfter,
  groupWaits,
  livenessBound,
  type ReceivedWebhook,
  summarizePaths,
} from "../src/alerts/measure.js";
import { type AlertsResults, pathChartSpec } from "../src/alerts/report.js";

const POLICY = "policy-1";
const hook = (receivedAt: number, node: string, type = "alert.firing", policy = POLICY): ReceivedWebhook => ({
  receivedAt,
  type,
  alert: { startsAt: new Date(receivedAt - 5_000).toISOString(), labels: { node, policy } },
});

describe("livenessBound", () => {
  it("is the gateway's offline-after (3 heartbeats + slack) plus one sweep", () => {
    // 30 s heartbeat, 2 s flush: slack max(8 s, 10 s) = 10 s, offline after 100 s, sweep every 5 s.
    expect(livenessBound(30, 2_000)).toEqual({
      offlineAfterMs: 100_000,
      sweepIntervalMs: 5_000,
      boundMs: 105_000,
    });
    // Short heartbeats: the flush sets the slack and the sweep.
    expect(livenessBound(1, 500)).toEqual({ offlineAfterMs: 5_000, sweepIntervalMs: 500, boundMs: 5_500 });
  });
});

describe("firstFiringByNode", () => {
  it("counts each node once, at its first firing delivery of the policy, whatever the arrival order", () => {
    const first = firstFiringByNode(
      [
        hook(3_000, "a"), // a re-send, later
        hook(1_000, "a"),
        hook(2_000, "b", "alert.resolved"),
        hook(2_500, "b", "alert.firing", "other-policy"),
        hook(4_000, "b"),
      ],
      POLICY,
    );
    expect([...first.keys()].sort()).toEqual(["a", "b"]);
    expect(first.get("a")).toEqual({ deliveredAt: 1_000, firedAt: -4_000 });
    expect(first.get("b")?.deliveredAt).toBe(4_000);
  });

  it("ignores alerts without a node label", () => {
    const noNode: ReceivedWebhook = {
      receivedAt: 1,
      type: "alert.firing",
      alert: { startsAt: "", labels: { policy: POLICY } },
    };
    expect(firstFiringByNode([noNode], POLICY).size).toBe(0);
  });
});

describe("firstZeroAfter", () => {
  it("finds the first 0 sample at or after the stop, skipping older zeros", () => {
    const values: Array<[number, string]> = [
      [10, "0"],
      [40, "1"],
      [70, "1"],
      [100, "0"],
      [130, "0"],
    ];
    expect(firstZeroAfter(values, 50_000)).toBe(100_000);
    expect(firstZeroAfter(values, 100_000)).toBe(100_000);
    expect(firstZeroAfter(values, 131_000)).toBeUndefined();
  });
});

describe("summarizePaths", () => {
  it("splits each node's path into steps and subtracts for and the liveness bound", () => {
    const summary = summarizePaths(
      [
        {
          node: "a",
          stoppedAt: 0,
          offlineAt: 60_000,
          seriesZeroAt: 80_000,
          firedAt: 150_000,
          relayedAt: 161_000,
          deliveredAt: 162_000,
        },
        { node: "b", stoppedAt: 1_000, offlineAt: 71_000 },
      ],
      60_000,
      75_000,
    );
    expect(summary.stopped).toBe(2);
    expect(summary.delivered).toBe(1);
    expect(summary.total?.max).toBe(162_000);
    expect(summary.beyondFor?.p50).toBe(102_000);
    expect(summary.beyondForAndLiveness?.p50).toBe(27_000);
    expect(summary.stages.liveness).toMatchObject({ count: 2, p50: 60_000, max: 70_000 });
    expect(summary.stages.series?.p50).toBe(20_000);
    expect(summary.stages.rulerBeyondFor?.p50).toBe(10_000);
    expect(summary.stages.alertmanagerToRelay?.p50).toBe(11_000);
    expect(summary.stages.delivery?.p50).toBe(1_000);
  });
});

describe("pathChartSpec", () => {
  it("draws each node's observed steps end to end, in seconds, skipping the unobserved", () => {
    const results = {
      forMinutes: 1,
      intervals: { livenessBoundMs: 75_000 },
      paths: [
        {
          node: "a",
          stoppedAt: 0,
          offlineMs: 60_000,
          seriesZeroMs: null,
          firedMs: 150_000,
          relayedMs: 161_000,
          deliveredMs: 162_000,
        },
      ],
    } as unknown as AlertsResults;
    const spec = pathChartSpec(results) as {
      layer: Array<{ data?: { values: unknown[] } }>;
      data: { values: Array<{ from: number; to: number }> };
    };
    expect(spec.data.values.map((value) => [value.from, value.to])).toEqual([
      [0, 60],
      [60, 150],
      [150, 161],
      [161, 162],
    ]);
    expect(spec.layer[1]?.data?.values).toEqual([{ at: 135 }]);
  });
});

describe("groupWaits", () => {
  it("lists the distinct group waits of an uploaded Alertmanager config", () => {
    const config = 'route:\n  group_wait: 30s\n  routes:\n    - group_wait: 0s\n    - group_wait: "0s"\n';
    expect(groupWaits(config)).toBe("30s, 0s");
    expect(groupWaits("route:\n  receiver: relay\n")).toBe("Alertmanager's default (30s)");
  });
});
