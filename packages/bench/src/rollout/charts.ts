import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TopLevelSpec } from "vega-lite";
import { renderSvg } from "../charts.js";
import { ROLLOUT_TARGETS, type RolloutBenchResults } from "./results.js";

/** The rollout report's charts (Vega-Lite, rendered to SVG in Node like the edge report's). */

const base = { $schema: "https://vega.github.io/schema/vega-lite/v6.json", width: 640, height: 260 } as const;

export const batchLabel = (batch: number | null) => (batch === null ? "late" : `batch ${batch + 1}`);

export function rolloutChartSpecs(results: RolloutBenchResults): Record<string, TopLevelSpec> {
  const kills = results.runs.flatMap((run) =>
    run.kill ? [{ run: run.name, seconds: run.kill.atSeconds, label: "gateway kill -9" }] : [],
  );
  const latencyRows = results.runs.flatMap((run) =>
    run.batches.flatMap((batch) =>
      batch.toRunning
        ? (["p50", "p99"] as const).map((stat) => ({
            batch: batchLabel(batch.batch),
            series: `${run.name} ${stat}`,
            ms: Math.max(1, Math.round(batch.toRunning?.[stat] ?? 0)),
          }))
        : [],
    ),
  );
  const t0 = results.timeline[0]?.at ?? 0;
  return {
    "running-over-time": {
      ...base,
      title: `Nodes running the new version (${results.config.nodes} hollow agents, ${results.config.batches} batches)`,
      layer: [
        {
          data: {
            values: results.runs.flatMap((run) =>
              run.runningSeries.map((point) => ({ ...point, run: run.name })),
            ),
          },
          mark: { type: "line", interpolate: "step-after" },
          encoding: {
            x: { field: "seconds", type: "quantitative", title: "seconds since the rollout was started" },
            y: { field: "count", type: "quantitative", title: "nodes running it" },
            color: { field: "run", type: "nominal", title: null },
          },
        },
        {
          data: { values: kills },
          mark: { type: "rule", strokeDash: [4, 3], color: "firebrick" },
          encoding: { x: { field: "seconds", type: "quantitative" } },
        },
      ],
    },
    "batch-latency": {
      ...base,
      title: "Dispatch committed → running, per batch (target p99 ≤ 5 s)",
      layer: [
        {
          data: { values: latencyRows },
          mark: "bar",
          encoding: {
            x: { field: "batch", type: "nominal", title: null, axis: { labelAngle: 0 } },
            xOffset: { field: "series", type: "nominal" },
            y: { field: "ms", type: "quantitative", title: "milliseconds" },
            color: { field: "series", type: "nominal", title: null },
          },
        },
        {
          data: { values: [{ ms: ROLLOUT_TARGETS.p99Ms }] },
          mark: { type: "rule", strokeDash: [4, 3], color: "firebrick" },
          encoding: { y: { field: "ms", type: "quantitative" } },
        },
      ],
    },
    "controller-cpu": {
      ...base,
      title: "Gateway (controller) and hub CPU over the run (percent of one core)",
      data: {
        values: results.timeline
          .filter((sample) => sample.component === "gateway" || sample.component === "nats-server")
          .map((sample) => ({
            component: sample.component,
            phase: sample.phase,
            seconds: Math.round((sample.at - t0) / 1000),
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
  };
}

/** Writes `rollout-<name>.svg` for every chart into `dir`; returns the file names. */
export async function writeRolloutCharts(results: RolloutBenchResults, dir: string): Promise<string[]> {
  const written: string[] = [];
  for (const [name, spec] of Object.entries(rolloutChartSpecs(results))) {
    const file = `rollout-${name}.svg`;
    await writeFile(join(dir, file), await renderSvg(spec));
    written.push(file);
  }
  return written;
}
