import "server-only";
import { availableParallelism } from "node:os";
import { DEFAULT_FAIR_SHARE, defaultConcurrency, FairShare } from "@edgefleet/api";
import { env } from "~/env";

// One per process: rate limits and fair queuing across organizations for tRPC and REST alike.
// Kept on globalThis so that dev-mode module reloads do not start a second, empty one.
const globalForFairShare = globalThis as unknown as { edgefleetFairShare?: FairShare };
if (!globalForFairShare.edgefleetFairShare) {
  globalForFairShare.edgefleetFairShare = new FairShare({
    ...DEFAULT_FAIR_SHARE,
    concurrency: env.EDGEFLEET_API_CONCURRENCY ?? defaultConcurrency(availableParallelism()),
    maxPerOrganization: env.EDGEFLEET_API_MAX_PER_ORG,
    organization: { ratePerSecond: env.EDGEFLEET_ORG_RATE, burst: env.EDGEFLEET_ORG_BURST },
    apiKey: { ratePerSecond: env.EDGEFLEET_API_KEY_RATE, burst: env.EDGEFLEET_API_KEY_BURST },
  });
}
export const fairShare: FairShare = globalForFairShare.edgefleetFairShare;
