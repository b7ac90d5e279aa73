import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import packageJson from "../package.json" with { type: "json" };

export const METRIC_PREFIX = "edgefleet_gateway_";

export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;

/**
 * Failures of work nobody awaits (timer ticks, fire-and-forget handlers), by task: counted by
 * runInBackground (background.ts). Module-level because that work is started deep inside services
 * that get no registry; each gateway registry registers this one counter.
 */
export const backgroundFailures = new Counter({
  name: `${METRIC_PREFIX}background_failures_total`,
  help: "Background work (timer ticks, unawaited handlers) that failed and was logged instead of crashing, by task",
  labelNames: ["task"] as const,
  registers: [],
});

/**
 * A registry of our own rather than prom-client's global one, so that tests and a future
 * second component in the same process cannot collide on metric names.
 */
export function createGatewayMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  registry.registerMetric(backgroundFailures);

  const dependencyUp = new Gauge({
    name: `${METRIC_PREFIX}dependency_up`,
    help: "1 when the dependency answered its last health check, 0 otherwise",
    labelNames: ["dependency"] as const,
    registers: [registry],
  });

  const httpRequests = new Counter({
    name: `${METRIC_PREFIX}http_requests_total`,
    help: "HTTP requests served, by matched route and status code",
    labelNames: ["route", "code"] as const,
    registers: [registry],
  });

  const buildInfo = new Gauge({
    name: `${METRIC_PREFIX}build_info`,
    help: "Always 1; labels identify the running build",
    labelNames: ["version", "node_version"] as const,
    registers: [registry],
  });
  buildInfo.set({ version: packageJson.version, node_version: process.version }, 1);

  return { registry, dependencyUp, httpRequests };
}
