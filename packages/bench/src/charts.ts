import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import type { BenchResults } from "./results.js";

/** The report's charts: Vega-Lite specs rendered to SVG in Node (no browser, no canvas). */

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

const base = { $schema: "https://vega.github.io/schema/vega-lite/v6.json", width: 640, height: 260 } as const;

export function chartSpecs(results: BenchResults): Record<string, TopLevelSpec> {
  const phases = ["enroll", "connect", "rollout", "idle"];
  return {
    "fleet-over-time": {
      ...base,
      title: `Nodes enrolled and online (${results.config.nodes} hollow agents)`,
      data: { values: results.fleetSeries },
      mark: { type: "line", interpolate: "step-after" },
      encoding: {
        x: { field: "seconds", type: "quantitative", title: "seconds since enrollment began" },
        y: { field: "count", type: "quantitative", title: "nodes" },
        color: { field: "series", type: "nominal", title: null },
      },
    },
    latency: {
      ...base,
      title: "Latency distributions (value at each percentile)",
      data: { values: results.latencyCurves.map((point) => ({ ...point, ms: Math.max(1, point.ms) })) },
      mark: { type: "line", interpolate: "step-after" },
      encoding: {
        x: { field: "percentile", type: "quantitative", title: "percentile" },
        y: { field: "ms", type: "quantitative", title: "milliseconds (log)", scale: { type: "log" } },
        color: { field: "metric", type: "nominal", title: null },
      },
    },
    cpu: {
      ...base,
      title: "Control-plane CPU over the run (percent of one core)",
      data: {
        values: results.timeline.map((sample) => ({
          component: sample.component,
          seconds: Math.round((sample.at - (results.timeline[0]?.at ?? sample.at)) / 1000),
          cpu: Math.round(sample.cpuPercent * 10) / 10,
        })),
      },
      mark: { type: "line", strokeWidth: 1.5 },
      encoding: {
        x: { field: "seconds", type: "quantitative", title: "seconds since the stack was up" },
        y: { field: "cpu", type: "quantitative", title: "CPU %" },
        color: { field: "component", type: "nominal", title: null },
      },
    },
    memory: {
      ...base,
      title: "Peak memory per component (PSS, MiB) by phase",
      data: {
        values: results.usage
          .filter((usage) => phases.includes(usage.phase))
          .map((usage) => ({ ...usage, pss: Math.round(usage.pssMiBMax) })),
      },
      mark: "bar",
      encoding: {
        x: { field: "component", type: "nominal", title: null, axis: { labelAngle: 0 } },
        xOffset: { field: "phase", type: "nominal", sort: phases },
        y: { field: "pss", type: "quantitative", title: "MiB" },
        color: { field: "phase", type: "nominal", sort: phases, title: "phase" },
      },
    },
  };
}

/** Writes `<name>.svg` for every chart into `dir`; returns the file names. */
export async function writeCharts(results: BenchResults, dir: string, prefix: string): Promise<string[]> {
  const written: string[] = [];
  for (const [name, spec] of Object.entries(chartSpecs(results))) {
    const file = `${prefix}-${name}.svg`;
    await writeFile(join(dir, file), await renderSvg(spec));
    written.push(file);
  }
  return written;
}
