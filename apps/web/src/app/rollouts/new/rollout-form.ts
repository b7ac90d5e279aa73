/**
 * The new-rollout form: what a person types (strings, choices, rows), turned into the API's
 * `rolloutPlanInput` and judged by it, i.e. by @edgefleet/rollout's strategy schema, the one the
 * server parses and the planner trusts. Each issue lands on the field that produced the value it
 * is about (the conversion records which form field each part of the strategy came from).
 */
import { rolloutPlanInput } from "@edgefleet/api/schemas";
import type { FieldErrors, Resolver } from "react-hook-form";
import type { z } from "zod";

export type PlanInput = z.output<typeof rolloutPlanInput>;
type Pause = "" | "none" | "approval" | "timed";
type Offline = "" | "skip" | "wait" | "fail";

export interface BatchRow {
  kind: "count" | "percent" | "selector";
  count: string;
  percent: string;
  selector: string;
  /** For selector batches: "10" or "25%"; empty: every match. */
  limit: string;
  /** Empty: the rollout's default. */
  successThreshold: string;
  timeoutSeconds: string;
  offline: Offline;
  pauseAfter: Pause;
  pauseSeconds: string;
  /** Empty: the rollout's default gates (none unless set). */
  gates: GateRow[];
}

/** A metric gate as typed: a preset or PromQL, a window, and a threshold or a comparison. */
export interface GateRow {
  name: string;
  /** A preset's name, or "promql" for the operator's own query. */
  metric: string;
  promql: string;
  windowSeconds: string;
  kind: "compare" | "threshold";
  worse: "higher" | "lower" | "either";
  /** Relative, 0.2 = the canary may be 20 % worse than the baseline's median. */
  tolerance: string;
  minDelta: string;
  max: string;
  min: string;
  failureLimit: string;
  critical: boolean;
}

/** Sensible criteria per preset: restarts by an absolute count, the rest against the baseline. */
export function presetGate(metric: string, taken: readonly string[] = []): GateRow {
  const base = metric === "promql" ? "custom" : metric.replace(/_/g, "-");
  let name = base;
  for (let i = 2; taken.includes(name); i++) name = `${base}-${i}`;
  const gate: GateRow = {
    name,
    metric,
    promql: metric === "promql" ? "sum by (node) (rate(edgefleet_app_restarts_total[$window]))" : "",
    windowSeconds: "300",
    kind: "compare",
    worse: "higher",
    tolerance: "0.2",
    minDelta: "",
    max: "",
    min: "",
    failureLimit: "0",
    critical: true,
  };
  if (metric === "app_restarts") return { ...gate, kind: "threshold", max: "0" };
  if (metric === "node_bytes_up" || metric === "node_bytes_down") return { ...gate, tolerance: "0.5" };
  if (metric === "hub_rtt") return { ...gate, tolerance: "0.5", minDelta: "0.05", critical: false };
  if (metric === "promql") return { ...gate, kind: "threshold", max: "0.1", critical: false };
  return gate;
}

export interface WindowRow {
  siteId: string;
  days: string[];
  start: string;
  end: string;
}

export interface RolloutFormValues {
  appVersionId: string;
  target: { selector: string; siteIds: string[] };
  batches: BatchRow[];
  defaults: {
    successThreshold: string;
    timeoutSeconds: string;
    offline: Exclude<Offline, "">;
    waitSeconds: string;
    afterWait: "skip" | "fail";
    pauseAfter: Exclude<Pause, "">;
    pauseSeconds: string;
  };
  budget: { kind: "" | "count" | "percent"; value: string };
  /** Each site's uplink budget: MB per second (decimal), downloads at once; empty: none. */
  siteBandwidth: { megabytesPerSecond: string; concurrentDownloads: string };
  windows: WindowRow[];
  onBatchFailure: "pause" | "rollback";
}

export const emptyBatch = (kind: BatchRow["kind"], size = ""): BatchRow => ({
  kind,
  count: kind === "count" ? size : "",
  percent: kind === "percent" ? size : "",
  selector: "",
  limit: "",
  successThreshold: "",
  timeoutSeconds: "",
  offline: "",
  pauseAfter: "",
  pauseSeconds: "",
  gates: [],
});

/** A canary of one node, then a quarter, then the rest, approved by a person after the canary. */
export function rolloutFormDefaults(appVersionId: string): RolloutFormValues {
  return {
    appVersionId,
    target: { selector: "", siteIds: [] },
    batches: [{ ...emptyBatch("count", "1"), pauseAfter: "approval" }, emptyBatch("percent", "25")],
    defaults: {
      successThreshold: "100",
      timeoutSeconds: "1800",
      offline: "skip",
      waitSeconds: "900",
      afterWait: "skip",
      pauseAfter: "none",
      pauseSeconds: "300",
    },
    budget: { kind: "", value: "" },
    siteBandwidth: { megabytesPerSecond: "", concurrentDownloads: "" },
    windows: [],
    onBatchFailure: "pause",
  };
}

/** Text to number; empty is "not given". Not-a-number stays NaN so that the schema says so. */
const num = (text: string): number | undefined => (text.trim() === "" ? undefined : Number(text.trim()));

/** MB per second (decimal, 1 MB = 10^6 bytes) to whole bytes per second; empty: not given. */
const mega = (text: string): number | undefined => {
  const value = num(text);
  return value === undefined ? undefined : Math.round(value * 1_000_000);
};

/** The API's input, and for each part of it the form field it came from (dotted paths). */
export function planInputOf(values: RolloutFormValues): { input: unknown; fields: Map<string, string> } {
  const fields = new Map<string, string>();
  const from = (apiPath: string, formPath: string) => fields.set(apiPath, formPath);
  from("appVersionId", "appVersionId");
  from("target.selector", "target.selector");
  from("target.siteIds", "target.siteIds");
  from("target", "target.selector");

  const pause = (pauseAfter: Pause, seconds: string, api: string, form: string) => {
    from(`${api}.pauseAfter`, `${form}.pauseAfter`);
    from(`${api}.pauseAfter.seconds`, `${form}.pauseSeconds`);
    if (pauseAfter === "") return undefined;
    return pauseAfter === "timed" ? { seconds: num(seconds) } : pauseAfter;
  };

  const batches = values.batches.map((row, i) => {
    const api = `strategy.batches.${i}`;
    const form = `batches.${i}`;
    from(api, `${form}.${row.kind}`);
    for (const field of [
      "count",
      "percent",
      "selector",
      "limit",
      "successThreshold",
      "timeoutSeconds",
      "offline",
    ]) {
      from(`${api}.${field}`, `${form}.${field}`);
    }
    const batch: Record<string, unknown> = {};
    if (row.kind === "count") batch.count = num(row.count) ?? Number.NaN;
    if (row.kind === "percent") batch.percent = num(row.percent) ?? Number.NaN;
    if (row.kind === "selector") {
      batch.selector = row.selector.trim();
      const limit = row.limit.trim();
      if (limit)
        batch.limit = limit.endsWith("%") ? { percent: num(limit.slice(0, -1)) } : { count: num(limit) };
    }
    const overrides = {
      successThreshold: num(row.successThreshold),
      timeoutSeconds: num(row.timeoutSeconds),
      offline: row.offline || undefined,
      pauseAfter: pause(row.pauseAfter, row.pauseSeconds, api, form),
    };
    for (const [key, value] of Object.entries(overrides)) if (value !== undefined) batch[key] = value;
    if (row.gates.length > 0) {
      batch.gates = row.gates.map((gate, j) =>
        gateInputOf(gate, `${api}.gates.${j}`, `${form}.gates.${j}`, from),
      );
    }
    return batch;
  });
  from("strategy.batches", "batches.0.kind");

  const d = values.defaults;
  for (const field of ["successThreshold", "timeoutSeconds", "offline", "waitSeconds", "afterWait"]) {
    from(`strategy.defaults.${field}`, `defaults.${field}`);
  }
  const defaults = {
    successThreshold: num(d.successThreshold),
    timeoutSeconds: num(d.timeoutSeconds),
    offline: d.offline,
    waitSeconds: num(d.waitSeconds),
    afterWait: d.afterWait,
    pauseAfter: pause(d.pauseAfter, d.pauseSeconds, "strategy.defaults", "defaults"),
  };

  const strategy: Record<string, unknown> = {
    batches,
    defaults: Object.fromEntries(Object.entries(defaults).filter(([, v]) => v !== undefined)),
    onBatchFailure: values.onBatchFailure,
  };
  from("strategy.onBatchFailure", "onBatchFailure");

  if (values.budget.kind) {
    strategy.disruptionBudget = {
      maxUpdatingPerSite: { [values.budget.kind]: num(values.budget.value) ?? Number.NaN },
    };
    from("strategy.disruptionBudget", "budget.value");
  }

  const bandwidth = {
    bytesPerSecond: mega(values.siteBandwidth.megabytesPerSecond),
    concurrentDownloads: num(values.siteBandwidth.concurrentDownloads),
  };
  if (bandwidth.bytesPerSecond !== undefined || bandwidth.concurrentDownloads !== undefined) {
    strategy.siteBandwidth = Object.fromEntries(Object.entries(bandwidth).filter(([, v]) => v !== undefined));
    from("strategy.siteBandwidth", "siteBandwidth.megabytesPerSecond");
    from("strategy.siteBandwidth.bytesPerSecond", "siteBandwidth.megabytesPerSecond");
    from("strategy.siteBandwidth.concurrentDownloads", "siteBandwidth.concurrentDownloads");
  }

  if (values.windows.length > 0) {
    const sites: Record<string, unknown[]> = {};
    for (const [i, row] of values.windows.entries()) {
      const list = sites[row.siteId] ?? [];
      const api = `strategy.maintenanceWindows.sites.${row.siteId}.${list.length}`;
      for (const field of ["days", "start", "end"]) from(`${api}.${field}`, `windows.${i}.${field}`);
      from(api, `windows.${i}.start`);
      from(`strategy.maintenanceWindows.sites.${row.siteId}`, `windows.${i}.siteId`);
      list.push({ days: row.days, start: row.start, end: row.end });
      sites[row.siteId] = list;
    }
    strategy.maintenanceWindows = { sites };
  }

  return {
    input: {
      appVersionId: values.appVersionId,
      target: { selector: values.target.selector.trim(), siteIds: values.target.siteIds },
      strategy,
    },
    fields,
  };
}

/** One gate's API input, recording which form field each part came from. */
function gateInputOf(
  gate: GateRow,
  api: string,
  form: string,
  from: (apiPath: string, formPath: string) => void,
): Record<string, unknown> {
  from(api, `${form}.name`);
  from(`${api}.name`, `${form}.name`);
  from(`${api}.metric`, `${form}.metric`);
  from(`${api}.metric.promql`, `${form}.promql`);
  from(`${api}.metric.preset`, `${form}.metric`);
  from(`${api}.windowSeconds`, `${form}.windowSeconds`);
  from(`${api}.criterion`, `${form}.kind`);
  for (const field of ["worse", "tolerance", "minDelta", "max", "min", "failureLimit"]) {
    from(`${api}.criterion.${field}`, `${form}.${field}`);
  }
  const criterion: Record<string, unknown> =
    gate.kind === "threshold"
      ? { kind: "threshold", max: num(gate.max), min: num(gate.min), failureLimit: num(gate.failureLimit) }
      : { kind: "compare", worse: gate.worse, tolerance: num(gate.tolerance), minDelta: num(gate.minDelta) };
  return {
    name: gate.name.trim(),
    metric: gate.metric === "promql" ? { promql: gate.promql } : { preset: gate.metric },
    windowSeconds: num(gate.windowSeconds),
    criterion: Object.fromEntries(Object.entries(criterion).filter(([, v]) => v !== undefined)),
    critical: gate.critical,
  };
}

/** The form field an issue at `path` belongs to: the nearest part of the input a field produced. */
export function fieldOf(path: PropertyKey[], fields: Map<string, string>): string | null {
  for (let length = path.length; length > 0; length--) {
    const field = fields.get(path.slice(0, length).map(String).join("."));
    if (field) return field;
  }
  return null;
}

function setPath(errors: Record<string, unknown>, path: string, message: string) {
  const parts = path.split(".");
  let node = errors;
  for (const part of parts.slice(0, -1)) {
    node[part] = (node[part] as Record<string, unknown> | undefined) ?? {};
    node = node[part] as Record<string, unknown>;
  }
  const last = parts.at(-1) as string;
  if (!node[last]) node[last] = { type: "validate", message };
}

/** react-hook-form resolver: the form is valid when the API's schema accepts what it makes. */
export const rolloutFormResolver: Resolver<RolloutFormValues, unknown, PlanInput> = async (values) => {
  const { input, fields } = planInputOf(values);
  const result = rolloutPlanInput.safeParse(input);
  if (result.success) return { values: result.data, errors: {} };
  const errors: Record<string, unknown> = {};
  for (const issue of result.error.issues) {
    const field = fieldOf(issue.path, fields);
    if (field) setPath(errors, field, issue.message);
    else setPath(errors, "root.server", `${issue.path.join(".")}: ${issue.message}`);
  }
  return { values: {}, errors: errors as FieldErrors<RolloutFormValues> };
};
