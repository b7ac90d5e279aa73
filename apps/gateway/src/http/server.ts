import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { DependencyHealth } from "../health/dependency-health.js";
import type { Logger } from "../logger.js";
import type { GatewayMetrics } from "../metrics.js";
import {
  handleInternalRequest,
  INTERNAL_PREFIX,
  type InternalApiDeps,
  internalRouteOf,
} from "./internal-api.js";

export interface HttpServerDeps {
  health: DependencyHealth;
  metrics: GatewayMetrics;
  logger: Logger;
  /** True once shutdown began: readiness fails so load balancers stop sending work first. */
  isShuttingDown: () => boolean;
  /** The control plane's internal API (leaf bundles, enrollment credentials); see internal-api.ts. */
  internal?: InternalApiDeps;
  /** The alert relay (Alertmanager webhooks, src/alerts/relay.ts); absent when alerting is off. */
  alertRelay?: ((req: IncomingMessage, path: string) => Promise<{ status: number; body: unknown }>) | null;
}

const ALERT_RELAY_PREFIX = "/alerts/relay/";

type RouteHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

// Unknown paths share one label so scanners cannot blow up the route label's cardinality.
const UNMATCHED_ROUTE = "unmatched";

export function createHttpServer({
  health,
  metrics,
  logger,
  isShuttingDown,
  internal,
  alertRelay,
}: HttpServerDeps): Server {
  const routes: Record<string, RouteHandler> = {
    // Liveness only says the event loop answers; a dependency outage must not get us restarted.
    "/healthz": (_req, res) => sendJson(res, 200, { status: "ok" }),
    "/readyz": (_req, res) => {
      const shuttingDown = isShuttingDown();
      const ready = !shuttingDown && health.allUp();
      sendJson(res, ready ? 200 : 503, {
        status: ready ? "ready" : shuttingDown ? "shutting_down" : "not_ready",
        dependencies: health.snapshot(),
      });
    },
    "/metrics": async (_req, res) => {
      const body = await metrics.registry.metrics();
      res.writeHead(200, { "content-type": metrics.registry.contentType });
      res.end(body);
    },
  };

  return createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://gateway.invalid").pathname;
    if (path.startsWith(ALERT_RELAY_PREFIX)) {
      res.on("finish", () =>
        metrics.httpRequests.inc({ route: ALERT_RELAY_PREFIX, code: String(res.statusCode) }),
      );
      if (!alertRelay) {
        sendJson(res, 404, { error: "alerting is not enabled on this gateway" });
        return;
      }
      alertRelay(req, path)
        .then(({ status, body }) => sendJson(res, status, body))
        .catch((error: unknown) => {
          // Alertmanager retries on an error answer: nothing is lost.
          logger.error({ err: error }, "alert relay request failed");
          if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
          else res.destroy();
        });
      return;
    }
    if (path.startsWith(INTERNAL_PREFIX)) {
      const route = internalRouteOf(path) ?? UNMATCHED_ROUTE;
      res.on("finish", () => metrics.httpRequests.inc({ route, code: String(res.statusCode) }));
      const deps = internal ?? {
        token: undefined,
        hubLeafUrls: [],
        createLeafBundle: null,
        enrollCredentials: null,
        artifacts: null,
      };
      handleInternalRequest(deps, req, res, path)
        .then(({ status, body }) => {
          // Answered before the body was read (a refused upload): this connection cannot carry
          // another request, so say so instead of letting the client reuse a socket we drop.
          if (!req.complete) res.setHeader("connection", "close");
          sendJson(res, status, body);
        })
        .catch((error: unknown) => {
          logger.error({ err: error, route }, "internal request failed");
          if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
          else res.destroy();
        });
      return;
    }
    const handler = routes[path];
    const route = handler ? path : UNMATCHED_ROUTE;
    res.on("finish", () => {
      metrics.httpRequests.inc({ route, code: String(res.statusCode) });
    });

    if (!handler) {
      sendJson(res, 404, { error: `no route for ${path}` });
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD");
      sendJson(res, 405, { error: `${req.method} is not allowed on ${path}; use GET` });
      return;
    }
    Promise.resolve(handler(req, res)).catch((error: unknown) => {
      logger.error({ err: error, route }, "request handler failed");
      if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
      else res.destroy();
    });
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    // Probe answers are live state; a cache in between would lie about readiness.
    "cache-control": "no-store",
  });
  res.end(text);
}
