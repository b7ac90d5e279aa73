/**
 * The rule compiler: alert policies → Mimir ruler rule groups for one organization (pure).
 * One group per enabled metric policy in one namespace, so a policy change rewrites one group.
 * Every alert carries `organization`, `policy`, `kind` and `severity`, the node's `node`,
 * `site` and `site_id` where it has them, and a `console_url` annotation back into the console.
 */
import { parseSelector, type SelectorRequirement } from "@edgefleet/selectors";
import { stringify } from "yaml";
import { APP_RESTARTS_SERIES, NODE_INFO_SERIES, NODE_ONLINE_SERIES, nodeLabelName } from "./node-series";
import { type CompilablePolicy, EVENT_POLICY_KINDS } from "./policy";

/** The one ruler namespace Edgefleet writes in each tenant (others are left alone). */
export const RULE_NAMESPACE = "edgefleet";

export interface RuleGroup {
  name: string;
  interval: string;
  rules: AlertingRule[];
}

export interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface CompileOptions {
  organizationId: string;
  /** Base URL of the console, for the links in alerts (no trailing slash needed). */
  consoleUrl: string;
  /** How often the ruler evaluates each group, e.g. "30s". */
  evaluationInterval: string;
}

export function ruleGroupName(policyId: string): string {
  return `policy-${policyId}`;
}

/** The rule groups of an organization's policies: enabled metric policies only, by policy id. */
export function compileRuleGroups(
  policies: readonly CompilablePolicy[],
  options: CompileOptions,
): RuleGroup[] {
  return policies
    .filter((policy) => policy.enabled && !EVENT_POLICY_KINDS.has(policy.spec.kind))
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((policy) => ({
      name: ruleGroupName(policy.id),
      interval: options.evaluationInterval,
      rules: [compileRule(policy, options)],
    }));
}

/** YAML of one group, as the ruler API takes it (POST /prometheus/config/v1/rules/{namespace}). */
export function ruleGroupYaml(group: RuleGroup): string {
  return stringify(group, { lineWidth: 0 });
}

const ALERT_NAMES: Record<string, string> = {
  node_offline: "EdgefleetNodeOffline",
  site_offline: "EdgefleetSiteOffline",
  cpu_above: "EdgefleetCpuHigh",
  memory_above: "EdgefleetMemoryHigh",
  disk_above: "EdgefleetDiskFull",
  app_crash_looping: "EdgefleetAppCrashLooping",
  bandwidth_over_budget: "EdgefleetSiteOverBandwidthBudget",
  promql: "EdgefleetCustom",
};

function compileRule(policy: CompilablePolicy, options: CompileOptions): AlertingRule {
  const spec = policy.spec;
  const info = infoSelector(policy);
  const join = `* on (node) group_left (site, site_id) ${info}`;
  const nodeLink = `${trimSlash(options.consoleUrl)}/nodes/{{ $labels.node }}`;
  const siteLink = `${trimSlash(options.consoleUrl)}/sites/{{ $labels.site_id }}`;
  let expr: string;
  let forMinutes = 0;
  let summary: string;
  let link = nodeLink;
  switch (spec.kind) {
    case "node_offline":
      expr = `(max by (node) (${NODE_ONLINE_SERIES}) == 0) ${join}`;
      forMinutes = spec.forMinutes;
      summary = `node {{ $labels.node }} offline for ${spec.forMinutes} min`;
      break;
    case "site_offline":
      expr = `max by (site, site_id) (max by (node) (${NODE_ONLINE_SERIES}) * on (node) group_left (site, site_id) ${infoSelector(policy, ['site_id!=""'])}) == 0`;
      forMinutes = spec.forMinutes;
      summary = `every node of site {{ $labels.site }} offline for ${spec.forMinutes} min`;
      link = siteLink;
      break;
    case "cpu_above":
      expr = `(100 * max by (node) (edgefleet_node_cpu_usage_ratio)) ${join} > ${spec.thresholdPercent}`;
      forMinutes = spec.forMinutes;
      summary = `CPU of node {{ $labels.node }} at {{ $value | printf "%.0f" }}% (above ${spec.thresholdPercent}%)`;
      break;
    case "memory_above":
      expr = `(100 * max by (node) (edgefleet_node_memory_used_bytes) / max by (node) (edgefleet_node_memory_total_bytes)) ${join} > ${spec.thresholdPercent}`;
      forMinutes = spec.forMinutes;
      summary = `memory of node {{ $labels.node }} at {{ $value | printf "%.0f" }}% (above ${spec.thresholdPercent}%)`;
      break;
    case "disk_above":
      expr = `(100 * max by (node) (edgefleet_node_disk_used_bytes) / max by (node) (edgefleet_node_disk_total_bytes)) ${join} > ${spec.thresholdPercent}`;
      forMinutes = spec.forMinutes;
      summary = `disk of node {{ $labels.node }} at {{ $value | printf "%.0f" }}% (above ${spec.thresholdPercent}%)`;
      break;
    case "app_crash_looping":
      expr = `max by (node, app) (increase(${APP_RESTARTS_SERIES}[${spec.windowMinutes}m])) ${join} >= ${spec.restarts}`;
      summary = `app {{ $labels.app }} restarted {{ $value | printf "%.0f" }} times in ${spec.windowMinutes} min on node {{ $labels.node }}`;
      break;
    case "bandwidth_over_budget":
      expr = `sum by (site, site_id) (sum by (node) (increase({__name__=~"edgefleet_node_network_(receive|transmit)_bytes_total"}[${spec.window}])) ${join}) > ${spec.budgetBytes}`;
      summary = `site {{ $labels.site }} moved {{ $value | humanize1024 }}B in ${spec.window} (budget ${spec.budgetBytes} B)`;
      link = siteLink;
      break;
    case "promql":
      expr = spec.expr;
      forMinutes = spec.forMinutes;
      summary = `${policy.name}: {{ $value }}`;
      link = `${trimSlash(options.consoleUrl)}/alerts`;
      break;
    default:
      throw new Error(`policy kind ${spec.kind} is an event, not a rule`);
  }
  return {
    alert: ALERT_NAMES[spec.kind] ?? "EdgefleetAlert",
    expr,
    ...(forMinutes > 0 ? { for: `${forMinutes}m` } : {}),
    labels: {
      organization: options.organizationId,
      policy: policy.id,
      kind: spec.kind,
      severity: policy.severity,
    },
    annotations: { summary, policy_name: policy.name, console_url: link },
  };
}

/** The info series limited to the policy's scope: its site and its selector's requirements. */
function infoSelector(policy: CompilablePolicy, extra: string[] = []): string {
  const matchers = [...extra];
  if (policy.siteId) matchers.push(`site_id=${quote(policy.siteId)}`);
  for (const requirement of parseSelector(policy.selector)) matchers.push(matcherOf(requirement));
  return `${NODE_INFO_SERIES}${matchers.length > 0 ? `{${matchers.join(", ")}}` : ""}`;
}

/**
 * A selector requirement as a PromQL matcher on the info series. A missing label reads as ""
 * in PromQL, so `!=` and `notin` also match nodes without the key, as in Kubernetes.
 */
function matcherOf(requirement: SelectorRequirement): string {
  const name = nodeLabelName(requirement.key);
  switch (requirement.op) {
    case "eq":
      return `${name}=${quote(requirement.value)}`;
    case "neq":
      return `${name}!=${quote(requirement.value)}`;
    case "in":
      return `${name}=~${quote(requirement.values.map(escapeRegex).join("|"))}`;
    case "notin":
      return `${name}!~${quote(requirement.values.map(escapeRegex).join("|"))}`;
    case "exists":
      return `${name}!=""`;
    case "notexists":
      return `${name}=""`;
  }
}

function quote(value: string): string {
  return JSON.stringify(value);
}

function escapeRegex(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
