"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useQuery } from "@tanstack/react-query";
import type { ComponentProps } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { TimeRangePicker, useTimeRange } from "~/components/time-range";
import { Skeleton } from "~/components/ui/skeleton";
import { useTRPC } from "~/trpc/react";
import { TimeChart, type TimeSeries } from "./time-chart";

type Charts = RouterOutputs["metrics"]["nodeSeries"]["charts"];
type ChartSeries = NonNullable<Charts[keyof Charts]>;

const MINUTE = 60_000;
const RANGES = [
  { label: "15m", span: 15 * MINUTE },
  { label: "1h", span: 60 * MINUTE },
  { label: "6h", span: 360 * MINUTE },
  { label: "24h", span: 1440 * MINUTE },
  { label: "7d", span: 7 * 1440 * MINUTE },
] as const;
const REFRESH_MS = 30_000;

/** Renames and rescales the API's series for one chart. */
function named(
  series: ChartSeries | undefined,
  name: (labels: Record<string, string>) => string,
  scale = 1,
): TimeSeries[] {
  const seen = new Map<string, number>();
  return (series ?? []).map((s) => {
    // Two series with one display name must stay two lines (recharts keys lines by name).
    const base = name(s.labels);
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    return { name: count > 1 ? `${base} #${count}` : base, points: s.points.map(([t, v]) => [t, v * scale]) };
  });
}

/** Used and total (memory, disk) as two lines of one chart. */
function usedOfTotal(used: ChartSeries | undefined, total: ChartSeries | undefined, scale: number) {
  return [...named(used, () => "used", scale), ...named(total, () => "total", scale)];
}

const MiB = 1 / 2 ** 20;
const GiB = 1 / 2 ** 30;

/** The node's charts, in the order they are shown. */
function chartsOf(charts: Charts): Array<ComponentProps<typeof TimeChart>> {
  return [
    { title: "CPU", unit: "%", testId: "chart-cpu", series: named(charts.cpu, () => "cpu", 100) },
    {
      title: "Memory",
      unit: "MiB",
      testId: "chart-memory",
      series: usedOfTotal(charts.memoryUsed, charts.memoryTotal, MiB),
    },
    {
      title: "Disk",
      unit: "GiB",
      testId: "chart-disk",
      series: usedOfTotal(charts.diskUsed, charts.diskTotal, GiB),
    },
    {
      title: "Network",
      unit: "B/s",
      testId: "chart-network",
      series: [
        ...named(charts.networkReceive, (l) => `rx ${l.interface ?? ""}`),
        ...named(charts.networkTransmit, (l) => `tx ${l.interface ?? ""}`),
      ],
    },
    {
      title: "Round trip to hub",
      unit: "ms",
      testId: "chart-rtt",
      series: named(charts.rtt, () => "rtt", 1000),
    },
    {
      title: "Control traffic",
      unit: "B/s",
      testId: "chart-control",
      series: named(charts.controlBytes, (l) => `${l.type ?? "?"} ${l.direction ?? ""}`),
    },
  ];
}

export function NodeCharts({ nodeId }: { nodeId: string }) {
  const trpc = useTRPC();
  const timeRange = useTimeRange(RANGES, "1h", REFRESH_MS);
  const range = timeRange.range;
  const metrics = useQuery(
    trpc.metrics.nodeSeries.queryOptions(
      { nodeId, range },
      { placeholderData: (previous) => previous, retry: false },
    ),
  );
  const charts = metrics.data?.charts;

  return (
    <>
      <TimeRangePicker label="Time range" choices={RANGES} range={timeRange} />
      {metrics.error ? <ErrorNotice error={metrics.error} /> : null}
      {!charts ? (
        metrics.error ? null : (
          <Skeleton className="h-48" aria-label="Loading metrics" />
        )
      ) : (
        <div className="grid gap-4 md:grid-cols-2 xl:grid-cols-3">
          {chartsOf(charts).map((chart) => (
            <TimeChart key={chart.testId} {...chart} />
          ))}
        </div>
      )}
    </>
  );
}
