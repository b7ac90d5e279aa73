import { handleRestRequest } from "@edgefleet/api";
import { env } from "~/env";
import { agentDownloadUrl } from "~/server/api-context";
import { apiLatency } from "~/server/api-latency";
import { db } from "~/server/db";
import { fairShare } from "~/server/fair-share";
import { gatewayConnection } from "~/server/gateway";
import { identityDirectory } from "~/server/identity-directory";

// The REST API (OpenAPI document at /api/openapi.json): API-key auth only, see @edgefleet/api openapi.ts.
export const dynamic = "force-dynamic";

function handler(req: Request) {
  // Where agents connect, for the install command of new enrollment tokens (optional).
  return handleRestRequest(req, {
    db,
    agentServerUrl: env.AGENT_SERVER_URL ?? null,
    agentDownloadUrl: agentDownloadUrl(),
    mimirUrl: env.MIMIR_URL,
    gateway: gatewayConnection(),
    identityDirectory,
    fairShare,
    apiLatency,
  });
}

// Every method reaches the handler, which answers 405 for what the OpenAPI document does not declare.
export {
  handler as GET,
  handler as POST,
  handler as PUT,
  handler as PATCH,
  handler as DELETE,
  handler as HEAD,
  handler as OPTIONS,
};
