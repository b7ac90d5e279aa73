"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { Segmented } from "~/components/segmented";
import { Skeleton } from "~/components/ui/skeleton";
import { useTRPC } from "~/trpc/react";
import { TimeChart, type TimeSeries } from "./time-chart";

type Charts = RouterOutputs["metrics"]["nodeSeries"]["charts"];
type ChartSeries = NonNullable<Charts[keyof Charts]>;

const RANGES = [
  { label: "15m", minutes: 15 },
  { label: "1h", minutes: 60 },
  { label: "6h", minutes: 360 },
  { label: "24h", minutes: 1440 },
  { label: "7d", minutes: 7 * 1440 },
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

export function NodeCharts({ nodeId }: { nodeId: string }) {
  const trpc = useTRPC();
  const [minutes, setMinutes] = useState<number>(60);
  // The range end moves on a timer, not on every render, so the query key stays stable between refreshes.
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  const range = { from: new Date(now - minutes * 60_000), to: new Date(now) };
  const metrics = useQuery(
    trpc.metrics.nodeSeries.queryOptions(
      { nodeId, range },
      { placeholderData: (previous) => previous, retry: false },
    ),
  );
  const charts = metrics.data?.charts;
  const MiB = 1 / 2 ** 20;
  const GiB = 1 / 2 ** 30;

  return (
    <>
      <Segmented
        label="Time range"
        options={RANGES.map((r) => ({ value: r.minutes, label: r.label }))}
        value={minutes}
        onChange={(next) => {
          setMinutes(next);
          setNow(Date.now());
        }}
      />
      {metrics.error ? <ErrorNotice error={metrics.error} /> : null}
      {!charts ? (
        metrics.error ? null : (
          <Skeleton className="h-48" aria-label="Loading metrics" />
        )
      ) : (
        <div className="grid gap-4 md:grid-cols-2 xl:grid-cols-3">
          <TimeChart title="CPU" unit="%" testId="chart-cpu" series={named(charts.cpu, () => "cpu", 100)} />
          <TimeChart
            title="Memory"
            unit="MiB"
            testId="chart-memory"
            series={[
              ...named(charts.memoryUsed, () => "used", MiB),
              ...named(charts.memoryTotal, () => "total", MiB),
            ]}
          />
          <TimeChart
            title="Disk"
            unit="GiB"
            testId="chart-disk"
            series={[
              ...named(charts.diskUsed, () => "used", GiB),
              ...named(charts.diskTotal, () => "total", GiB),
            ]}
          />
          <TimeChart
            title="Network"
            unit="B/s"
            testId="chart-network"
            series={[
              ...named(charts.networkReceive, (l) => `rx ${l.interface ?? ""}`),
              ...named(charts.networkTransmit, (l) => `tx ${l.interface ?? ""}`),
            ]}
          />
          <TimeChart
            title="Round trip to hub"
            unit="ms"
            testId="chart-rtt"
            series={named(charts.rtt, () => "rtt", 1000)}
          />
          <TimeChart
            title="Control traffic"
            unit="B/s"
            testId="chart-control"
            series={named(charts.controlBytes, (l) => `${l.type ?? "?"} ${l.direction ?? ""}`)}
          />
        </div>
      )}
    </>
  );
}
