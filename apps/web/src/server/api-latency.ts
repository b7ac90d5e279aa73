import "server-only";
import { API_LATENCY_SERIES, OrgHistograms, startHistogramPusher } from "@edgefleet/api";
import { env } from "~/env";

// One per process: every organization's tRPC and REST call latencies, pushed to Mimir (its own
// tenant) every 15 s for the SLO page. On globalThis so dev-mode reloads do not start a second.
const globalForLatency = globalThis as unknown as { edgefleetApiLatency?: OrgHistograms };
if (!globalForLatency.edgefleetApiLatency) {
  globalForLatency.edgefleetApiLatency = new OrgHistograms(API_LATENCY_SERIES);
  startHistogramPusher(globalForLatency.edgefleetApiLatency, env.MIMIR_URL);
}
export const apiLatency: OrgHistograms = globalForLatency.edgefleetApiLatency;
