import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TopLevelSpec } from "vega-lite";
import { renderSvg } from "../charts.js";
import type { HaBenchResults, TimelineSample } from "./results.js";

/** The HA report's charts: the timeline with its kills and the partition, availability, recovery. */

const base = { $schema: "https://vega.github.io/schema/vega-lite/v6.json", width: 720, height: 240 } as const;

/** Consecutive seconds of one probe in one state, merged into a segment (a few dozen rects, not thousands). */
export function segments(
  samples: readonly TimelineSample[],
  t0: number,
  probes: Record<string, (sample: TimelineSample) => string>,
): Array<{ probe: string; state: string; from: number; to: number }> {
  const out: Array<{ probe: string; state: string; from: number; to: number }> = [];
  for (const [probe, stateOf] of Object.entries(probes)) {
    let current: { probe: string; state: string; from: number; to: number } | null = null;
    for (const sample of samples) {
      const state = stateOf(sample);
      const second = (sample.at - t0) / 1000;
      if (current && current.state === state) {
        current.to = second + 1;
        continue;
      }
      if (current) out.push(current);
      current = { probe, state, from: second, to: second + 1 };
    }
    if (current) out.push(current);
  }
  return out;
}

const answer = (status: number | null) =>
  status === null ? "no answer" : status >= 200 && status < 300 ? "ok" : status >= 500 ? "5xx" : "4xx";

export function haChartSpecs(results: HaBenchResults): Record<string, TopLevelSpec> {
  const t0 = results.startedAt;
  const at = (ms: number) => Math.round((ms - t0) / 100) / 10;
  const kills = results.kills.map((kill) => ({ seconds: at(kill.at), label: `kill -9 ${kill.target}` }));
  const partition = [
    {
      from: at(results.partition.cutAt),
      to: at(results.partition.restoredAt),
      label: `site ${results.partition.site} cut off`,
    },
  ];
  const killRules = [
    {
      data: { values: kills },
      mark: { type: "rule" as const, strokeDash: [4, 3], color: "firebrick" },
      encoding: { x: { field: "seconds", type: "quantitative" as const } },
    },
    {
      data: { values: kills },
      mark: {
        type: "text" as const,
        angle: 270,
        align: "left" as const,
        dx: 4,
        dy: -4,
        fontSize: 9,
        color: "firebrick",
      },
      encoding: {
        x: { field: "seconds", type: "quantitative" as const },
        y: { value: 0 },
        text: { field: "label" },
      },
    },
  ];
  const partitionBand = {
    data: { values: partition },
    mark: { type: "rect" as const, color: "#999", opacity: 0.12 },
    encoding: {
      x: { field: "from", type: "quantitative" as const },
      x2: { field: "to" },
    },
  };
  const samples = results.timeline.filter((sample) => sample.at >= t0);
  const backlog = samples.flatMap((sample) => [
    {
      seconds: at(sample.at),
      series: `agents of ${results.config.sites[0]} (waiting for a PubAck)`,
      count: sample.agentBacklog[0],
    },
    {
      seconds: at(sample.at),
      series: `agents of ${results.config.sites[1]} (cut off, buffering)`,
      count: sample.agentBacklog[1],
    },
    ...(sample.ingestBacklog === null
      ? []
      : [
          { seconds: at(sample.at), series: "EF_UP (stored, not yet ingested)", count: sample.ingestBacklog },
        ]),
  ]);
  const probes: Record<string, (sample: TimelineSample) => string> = {};
  results.timeline[0]?.gateways.forEach((_, index) => {
    probes[`gateway-${index + 1} ready`] = (sample) => answer(sample.gateways[index] ?? null);
  });
  results.timeline[0]?.consoles.forEach((_, index) => {
    probes[`console-${index + 1} REST API`] = (sample) => answer(sample.consoles[index] ?? null);
  });
  results.timeline[0]?.nodeCommands.forEach((_, index) => {
    probes[`console-${index + 1} node command`] = (sample) => answer(sample.nodeCommands[index] ?? null);
  });
  probes["signed-in console page data"] = (sample) => answer(sample.session);
  probes["Keycloak (sign-in)"] = (sample) => answer(sample.keycloak);
  probes["rollout controller leasing"] = (sample) =>
    sample.controllerLeasing === null
      ? sample.running === null
        ? "no rollout yet"
        : "no answer"
      : sample.controllerLeasing
        ? "ok"
        : "lease lapsed";
  const recoveryRows = results.kills.flatMap((kill) =>
    (
      [
        ["server ready", kill.recovery.serverReady],
        ["agents delivering", kill.recovery.agentsDelivering],
        ["ingest caught up", kill.recovery.ingestCaughtUp],
        ["console API", kill.recovery.consoleApi],
        ["node commands", kill.recovery.nodeCommands],
        ["rollout controller", kill.recovery.controller],
      ] as const
    ).map(([signal, seconds]) => ({ kill: kill.target, signal, seconds: seconds ?? 0 })),
  );
  return {
    timeline: {
      ...base,
      title: "Reports waiting: at the agents (per site) and in EF_UP; kills and the partition marked",
      layer: [
        partitionBand,
        {
          data: { values: backlog },
          mark: { type: "line", interpolate: "step-after", strokeWidth: 1.4 },
          encoding: {
            x: { field: "seconds", type: "quantitative", title: "seconds since steady reporting began" },
            y: { field: "count", type: "quantitative", title: "reports" },
            color: { field: "series", type: "nominal", title: null, legend: { orient: "top", columns: 1 } },
          },
        },
        ...killRules,
      ],
    },
    availability: {
      ...base,
      height: 180,
      title: "What users and the controller saw, second by second",
      layer: [
        {
          data: { values: segments(samples, t0, probes) },
          mark: { type: "rect" },
          encoding: {
            x: { field: "from", type: "quantitative", title: "seconds since steady reporting began" },
            x2: { field: "to" },
            y: { field: "probe", type: "nominal", title: null, sort: Object.keys(probes) },
            color: {
              field: "state",
              type: "nominal",
              title: null,
              scale: {
                domain: ["ok", "5xx", "4xx", "no answer", "lease lapsed", "no rollout yet"],
                range: ["#4c9a2a", "#d62728", "#ff7f0e", "#7f7f7f", "#9467bd", "#e8e8e8"],
              },
              legend: { orient: "top" },
            },
          },
        },
        ...killRules.slice(0, 1),
      ],
    },
    rollout: {
      ...base,
      title: `Nodes running the rolled-out version (${results.rollout.nodes} nodes; site ${results.partition.site} after its link returned)`,
      layer: [
        {
          ...partitionBand,
          data: {
            values: partition.map((band) => ({
              ...band,
              from: band.from - at(results.rollout.startedAt),
              to: band.to - at(results.rollout.startedAt),
            })),
          },
        },
        {
          data: { values: results.rollout.runningSeries },
          mark: { type: "line", interpolate: "step-after" },
          encoding: {
            x: { field: "seconds", type: "quantitative", title: "seconds since the rollout was started" },
            y: { field: "count", type: "quantitative", title: "nodes" },
          },
        },
        {
          data: {
            values: kills.map((kill) => ({ ...kill, seconds: kill.seconds - at(results.rollout.startedAt) })),
          },
          mark: { type: "rule", strokeDash: [4, 3], color: "firebrick" },
          encoding: { x: { field: "seconds", type: "quantitative" } },
        },
      ],
    },
    recovery: {
      ...base,
      title: "Time to recover after each kill -9, by signal (seconds)",
      data: { values: recoveryRows },
      mark: "bar",
      encoding: {
        x: {
          field: "kill",
          type: "nominal",
          title: null,
          sort: results.kills.map((kill) => kill.target),
          axis: { labelAngle: 0 },
        },
        xOffset: { field: "signal", type: "nominal" },
        y: { field: "seconds", type: "quantitative", title: "seconds" },
        color: { field: "signal", type: "nominal", title: null, legend: { orient: "top" } },
      },
    },
  };
}

export async function writeHaCharts(results: HaBenchResults, dir: string): Promise<string[]> {
  const written: string[] = [];
  for (const [name, spec] of Object.entries(haChartSpecs(results))) {
    const file = `ha-chaos-${name}.svg`;
    await writeFile(join(dir, file), await renderSvg(spec));
    written.push(file);
  }
  return written;
}
