/** Recharts styling from the design tokens, so charts follow light and dark mode. */
export const chartTheme = {
  axis: {
    fontSize: 11,
    tick: { fill: "var(--muted-foreground)" },
    stroke: "var(--border)",
  },
  grid: { stroke: "var(--chart-grid)", strokeDasharray: "3 3" },
  tooltip: {
    contentStyle: {
      background: "var(--popover)",
      color: "var(--popover-foreground)",
      border: "1px solid var(--border)",
      borderRadius: 6,
      fontSize: 12,
    },
    labelStyle: { color: "var(--popover-foreground)" },
    // Recharts writes each item in its series' colour, which some series fail contrast with on the
    // popover (axe: color-contrast); the series' name says which it is.
    itemStyle: { color: "var(--popover-foreground)" },
  },
  legend: { fontSize: 11, color: "var(--foreground)" },
  series: ["var(--chart-1)", "var(--chart-4)", "var(--chart-3)", "var(--chart-2)", "var(--chart-5)"],
} as const;
