import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import { type CaseGroup, TARGETS } from "./cases.js";
import type { ConsoleBenchResults } from "./results.js";

/** The report's charts: Vega-Lite specs rendered to SVG in Node (no browser). */

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

const GROUPS: Array<{ group: CaseGroup; slug: string }> = [
  { group: "REST API", slug: "rest" },
  { group: "tRPC (console)", slug: "trpc" },
  { group: "page", slug: "pages" },
];

export function chartSpecs(results: ConsoleBenchResults): Record<string, TopLevelSpec> {
  const labelOf = new Map(results.cases.map((c) => [c.id, c.label]));
  const groupOf = new Map(results.cases.map((c) => [c.id, c.group]));
  const specs: Record<string, TopLevelSpec> = {};
  const sequential = results.passes[0];
  for (const { group, slug } of GROUPS) {
    const target = TARGETS[group];
    const values =
      sequential?.runs
        .filter((run) => groupOf.get(run.caseId) === group)
        .flatMap((run) =>
          run.distribution.map((point) => ({
            ...point,
            ms: Math.max(0.5, point.ms),
            case: labelOf.get(run.caseId),
          })),
        ) ?? [];
    if (values.length === 0) continue;
    specs[`distribution-${slug}`] = {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width: 640,
      height: 300,
      title: `${group}: latency distribution, ${sequential?.concurrency === 1 ? "sequential" : sequential?.name} (target p${target.percentile} ≤ ${target.ms} ms, dashed)`,
      layer: [
        {
          data: { values },
          mark: { type: "line", interpolate: "step-after", strokeWidth: 1.5 },
          encoding: {
            x: {
              field: "percentile",
              type: "quantitative",
              title: "percentile",
              scale: { domain: [0, 100] },
            },
            y: { field: "ms", type: "quantitative", title: "milliseconds (log)", scale: { type: "log" } },
            color: {
              field: "case",
              type: "nominal",
              title: null,
              legend: { orient: "bottom", columns: 2, labelLimit: 330 },
            },
          },
        },
        {
          data: { values: [{ ms: target.ms }] },
          mark: { type: "rule", strokeDash: [6, 4], color: "#b00" },
          encoding: { y: { field: "ms", type: "quantitative" } },
        },
      ],
    };
  }
  const bars = results.passes.flatMap((pass) =>
    pass.runs
      .filter((run) => run.summary)
      .map((run) => {
        const group = groupOf.get(run.caseId) as CaseGroup;
        const target = TARGETS[group];
        const summary = run.summary as NonNullable<typeof run.summary>;
        return {
          case: `${group === "page" ? "page " : group === "REST API" ? "REST " : "tRPC "}${labelOf.get(run.caseId)}`,
          pass: pass.concurrency === 1 ? "sequential" : `${pass.concurrency} in flight`,
          ms: Math.max(0.5, target.percentile === 95 ? summary.p95 : summary.p99),
        };
      }),
  );
  if (bars.length > 0)
    specs["tail-by-case"] = {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width: 420,
      title: "Tail latency per case: API p99, pages p95 (targets: 1 s and 500 ms)",
      data: { values: bars },
      // Dots, not bars: a bar on a log scale has no zero to start from.
      mark: { type: "circle", size: 70, opacity: 0.9 },
      encoding: {
        y: { field: "case", type: "nominal", title: null, sort: null, axis: { labelLimit: 420 } },
        x: { field: "ms", type: "quantitative", title: "milliseconds (log)", scale: { type: "log" } },
        color: { field: "pass", type: "nominal", title: null, legend: { orient: "top" } },
      },
    };
  return specs;
}

/** Writes `<prefix>-<name>.svg` for each chart; returns name → file name. */
export async function writeCharts(
  results: ConsoleBenchResults,
  outDir: string,
  prefix: string,
): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const [name, spec] of Object.entries(chartSpecs(results))) {
    const file = `${prefix}-${name}.svg`;
    await writeFile(join(outDir, file), await renderSvg(spec));
    files[name] = file;
  }
  return files;
}
