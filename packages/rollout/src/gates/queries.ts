/**
 * PromQL of a gate: pure text building, no I/O. Every query returns one value per node (label
 * `node`); the caller runs it as an instant query at the window's end, with X-Scope-OrgID = the
 * rollout's organization (never a parameter), and keeps the values of the cohort's nodes.
 */
import type { Gate, GatePreset } from "./spec";

/** Which series a cohort's query reads: its nodes, and for per-app presets the app's version. */
export interface CohortSelector {
  nodeIds: readonly string[];
  app: string;
  /** The version label the cohort's nodes must carry (canary), or must not carry (baseline). */
  version: { is: string } | { isNot: string };
}

/** A PromQL string literal (double quotes, backslash escapes). */
export function promString(value: string): string {
  return JSON.stringify(value);
}

function regexAlternatives(values: readonly string[]): string {
  // Node ids are UUIDs; anything else is escaped so that it matches literally.
  return values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
}

function matchers(cohort: CohortSelector, perApp: boolean): string {
  const parts = [`node=~${promString(regexAlternatives(cohort.nodeIds))}`];
  if (perApp) {
    parts.push(`app=${promString(cohort.app)}`);
    parts.push(
      "is" in cohort.version
        ? `version=${promString(cohort.version.is)}`
        : `version!=${promString(cohort.version.isNot)}`,
    );
  }
  return parts.join(",");
}

const PRESET_EXPRESSIONS: Record<GatePreset, { perApp: boolean; expr: (m: string, w: string) => string }> = {
  app_cpu: { perApp: true, expr: (m, w) => `avg_over_time(edgefleet_app_cpu_usage_ratio{${m}}[${w}])` },
  app_memory: { perApp: true, expr: (m, w) => `avg_over_time(edgefleet_app_memory_bytes{${m}}[${w}])` },
  // The restart count is a counter per instance; `increase` is what the window added.
  app_restarts: { perApp: true, expr: (m, w) => `increase(edgefleet_app_restarts_total{${m}}[${w}])` },
  node_cpu: { perApp: false, expr: (m, w) => `avg_over_time(edgefleet_node_cpu_usage_ratio{${m}}[${w}])` },
  node_memory: {
    perApp: false,
    expr: (m, w) => `avg_over_time(edgefleet_node_memory_used_bytes{${m}}[${w}])`,
  },
  node_bytes_up: {
    perApp: false,
    expr: (m, w) => `increase(edgefleet_node_network_transmit_bytes_total{${m}}[${w}])`,
  },
  node_bytes_down: {
    perApp: false,
    expr: (m, w) => `increase(edgefleet_node_network_receive_bytes_total{${m}}[${w}])`,
  },
  hub_rtt: { perApp: false, expr: (m, w) => `avg_over_time(edgefleet_node_rtt_seconds{${m}}[${w}])` },
};

/**
 * The newest node sample's time per node of a cohort (seconds): how far its reports have reached
 * Mimir. The CPU ratio is in every report.
 */
export function freshnessQuery(nodeIds: readonly string[]): string {
  return `max by (node) (timestamp(edgefleet_node_cpu_usage_ratio{node=~${promString(regexAlternatives(nodeIds))}}))`;
}

/** `300s`: a PromQL duration. */
export function promDuration(seconds: number): string {
  return `${Math.round(seconds)}s`;
}

/** Operator PromQL with its `$window` placeholder filled in. */
export function expandCustomPromql(promql: string, windowSeconds: number): string {
  return promql.replaceAll("$window", promDuration(windowSeconds));
}

/**
 * The query for one cohort: presets are summed per node (interfaces, several series of one
 * node); operator PromQL is used as written and its result filtered to the cohort's nodes.
 */
export function gateQuery(gate: Gate, cohort: CohortSelector): string {
  const window = promDuration(gate.windowSeconds);
  if ("promql" in gate.metric) return expandCustomPromql(gate.metric.promql, gate.windowSeconds);
  const preset = PRESET_EXPRESSIONS[gate.metric.preset];
  return `sum by (node) (${preset.expr(matchers(cohort, preset.perApp), window)})`;
}

/** The same metric as a time series per cohort (for the chart behind a verdict): the cohort's mean. */
export function gateChartQuery(gate: Gate, cohort: CohortSelector): string {
  return `avg(${gateQuery(gate, cohort)})`;
}

/**
 * Tenancy in operator PromQL: the tenant is the request's X-Scope-OrgID, so another tenant's
 * series cannot be read at all; a query that names another organization in an `org` matcher
 * is refused anyway, because it can only be a mistake (it would judge on no data).
 */
export function foreignOrganizationMatcher(promql: string, organizationId: string): string | null {
  for (const match of promql.matchAll(
    /\borg\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)/g,
  )) {
    const operator = match[1];
    const quoted = match[2] ?? "";
    const value = quoted.slice(1, -1);
    if (operator === "=" && value !== organizationId) return value;
    if (operator === "=~" && value !== organizationId) return value;
  }
  return null;
}
