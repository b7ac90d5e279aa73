"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { ArrowDownUpIcon } from "lucide-react";
import { useRouter } from "next/navigation";
import { Bar, BarChart, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { chartTheme } from "~/components/chart-theme";
import { EmptyState } from "~/components/ui/empty-state";

type TopBandwidth = RouterOutputs["metrics"]["topBandwidth"];
export type BandwidthWindow = TopBandwidth["window"];
export const BANDWIDTH_WINDOWS: BandwidthWindow[] = ["1h", "24h", "7d"];

const UNITS = ["B", "KB", "MB", "GB", "TB"];
/** 1536 → "1.5 KB" (decimal units, as links are billed). */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toLocaleString("en", { maximumFractionDigits: value < 10 ? 1 : 0 })} ${UNITS[unit]}`;
}

/** Horizontal bars, received and transmitted stacked, biggest consumer on top; a bar opens the node. */
export function TopBandwidth({ data }: { data: TopBandwidth }) {
  const router = useRouter();
  if (data.items.length === 0) {
    return (
      <EmptyState
        icon={<ArrowDownUpIcon />}
        title={`No network counters reported in the last ${data.window}.`}
      >
        Agents report bytes per interface with their metrics; a node shows up here after its first report.
      </EmptyState>
    );
  }
  const open = (bar: { payload?: { nodeId?: string } }) => {
    if (bar.payload?.nodeId) router.push(`/nodes/${bar.payload.nodeId}`);
  };
  const rows = data.items.map((item) => ({
    nodeId: item.nodeId,
    name: item.nodeName ?? `${item.nodeId.slice(0, 8)}… (deleted)`,
    received: item.receiveBytes,
    transmitted: item.transmitBytes,
  }));
  return (
    <div data-testid="top-bandwidth" style={{ width: "100%", height: 40 + rows.length * 28 }}>
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={rows} layout="vertical" margin={{ top: 0, right: 12, bottom: 0, left: 0 }}>
          <XAxis type="number" tickFormatter={formatBytes} {...chartTheme.axis} />
          <YAxis type="category" dataKey="name" width={120} interval={0} {...chartTheme.axis} />
          <Tooltip formatter={(value) => formatBytes(Number(value))} {...chartTheme.tooltip} />
          <Legend wrapperStyle={chartTheme.legend} />
          <Bar
            dataKey="received"
            stackId="bytes"
            fill="var(--chart-1)"
            isAnimationActive={false}
            cursor="pointer"
            onClick={open}
          />
          <Bar
            dataKey="transmitted"
            stackId="bytes"
            fill="var(--chart-2)"
            isAnimationActive={false}
            cursor="pointer"
            onClick={open}
          />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
