"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useRouter } from "next/navigation";
import { Bar, BarChart, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import styles from "./fleet.module.css";

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
    return <p className={styles.muted}>No network counters reported in the last {data.window}.</p>;
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
          <XAxis type="number" tickFormatter={formatBytes} fontSize={11} />
          <YAxis type="category" dataKey="name" width={120} fontSize={11} interval={0} />
          <Tooltip formatter={(value) => formatBytes(Number(value))} />
          <Legend wrapperStyle={{ fontSize: 11 }} />
          <Bar
            dataKey="received"
            stackId="bytes"
            fill="#0d74ce"
            isAnimationActive={false}
            cursor="pointer"
            onClick={open}
          />
          <Bar
            dataKey="transmitted"
            stackId="bytes"
            fill="#12a594"
            isAnimationActive={false}
            cursor="pointer"
            onClick={open}
          />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
