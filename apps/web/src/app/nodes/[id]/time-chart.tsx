"use client";

import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { chartTheme } from "~/components/chart-theme";

export interface TimeSeries {
  name: string;
  /** [unix ms, value] */
  points: Array<[number, number]>;
}

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
    <figure
      className="m-0 grid min-w-0 gap-2 rounded-lg border p-3"
      data-testid={props.testId}
      data-points={rows.length}
    >
      <figcaption className="text-sm font-medium">
        {props.title} <span className="font-normal text-muted-foreground">({props.unit})</span>
      </figcaption>
      {rows.length === 0 ? (
        <p className="grid h-[180px] place-items-center text-sm text-muted-foreground">
          No data in this range.
        </p>
      ) : (
        <ResponsiveContainer width="100%" height={180}>
          <LineChart data={rows} margin={{ top: 5, right: 10, bottom: 0, left: 0 }}>
            <CartesianGrid {...chartTheme.grid} />
            <XAxis
              dataKey="t"
              type="number"
              scale="time"
              domain={["dataMin", "dataMax"]}
              tickFormatter={(t: number) => timeFormat.format(t)}
              {...chartTheme.axis}
            />
            <YAxis width={48} tickFormatter={(v: number) => numberFormat.format(v)} {...chartTheme.axis} />
            <Tooltip
              labelFormatter={(t) => new Date(Number(t)).toLocaleString()}
              formatter={(value) => `${numberFormat.format(Number(value))} ${props.unit}`}
              {...chartTheme.tooltip}
            />
            {props.series.length > 1 ? <Legend wrapperStyle={chartTheme.legend} /> : null}
            {props.series.map((s, i) => (
              <Line
                key={s.name}
                dataKey={s.name}
                // A line through one or two points is too short to see (a gate window shorter than
                // two chart steps): mark the points themselves then.
                dot={s.points.length < 3}
                isAnimationActive={false}
                stroke={chartTheme.series[i % chartTheme.series.length]}
                strokeWidth={1.5}
              />
            ))}
          </LineChart>
        </ResponsiveContainer>
      )}
    </figure>
  );
}
