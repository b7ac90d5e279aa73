"use client";

import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import styles from "./detail.module.css";

export interface TimeSeries {
  name: string;
  /** [unix ms, value] */
  points: Array<[number, number]>;
}

const COLORS = ["#0d74ce", "#2a7e3b", "#ab6400", "#ce2c31", "#8e4ec6", "#12a594", "#60646c"];
const timeFormat = new Intl.DateTimeFormat("en", { hour: "2-digit", minute: "2-digit" });
const numberFormat = new Intl.NumberFormat("en", { maximumFractionDigits: 2 });

/** Rows keyed by time, one column per series, as recharts wants them. */
function toRows(series: TimeSeries[]): Array<Record<string, number>> {
  const rows = new Map<number, Record<string, number>>();
  for (const s of series) {
    for (const [t, value] of s.points) {
      const row = rows.get(t) ?? { t };
      row[s.name] = value;
      rows.set(t, row);
    }
  }
  return [...rows.values()].sort((a, b) => (a.t ?? 0) - (b.t ?? 0));
}

export function TimeChart(props: { title: string; unit: string; testId: string; series: TimeSeries[] }) {
  const rows = toRows(props.series);
  return (
    <figure className={styles.chart} data-testid={props.testId} data-points={rows.length}>
      <figcaption>
        {props.title} <span className={styles.muted}>({props.unit})</span>
      </figcaption>
      {rows.length === 0 ? (
        <p className={styles.noData}>No data in this range.</p>
      ) : (
        <ResponsiveContainer width="100%" height={180}>
          <LineChart data={rows} margin={{ top: 5, right: 10, bottom: 0, left: 0 }}>
            <CartesianGrid stroke="#e0e1e6" strokeDasharray="3 3" />
            <XAxis
              dataKey="t"
              type="number"
              scale="time"
              domain={["dataMin", "dataMax"]}
              tickFormatter={(t: number) => timeFormat.format(t)}
              fontSize={11}
            />
            <YAxis width={48} fontSize={11} tickFormatter={(v: number) => numberFormat.format(v)} />
            <Tooltip
              labelFormatter={(t) => new Date(Number(t)).toLocaleString()}
              formatter={(value) => `${numberFormat.format(Number(value))} ${props.unit}`}
            />
            {props.series.length > 1 ? <Legend wrapperStyle={{ fontSize: 11 }} /> : null}
            {props.series.map((s, i) => (
              <Line
                key={s.name}
                dataKey={s.name}
                dot={false}
                isAnimationActive={false}
                stroke={COLORS[i % COLORS.length]}
                strokeWidth={1.5}
              />
            ))}
          </LineChart>
        </ResponsiveContainer>
      )}
    </figure>
  );
}
