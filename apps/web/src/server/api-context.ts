import "server-only";
import { type ApiSession, createTRPCContext } from "@edgefleet/api";
import { cookies } from "next/headers";
import { auth } from "~/auth";
import { ACTIVE_ORGANIZATION_COOKIE, pickActiveOrganization } from "~/auth/active-organization";
import { env } from "~/env";
import { apiLatency } from "./api-latency";
import { db } from "./db";
import { fairShare } from "./fair-share";
import { fleetChanges } from "./fleet-changes";
import { gatewayConnection } from "./gateway";
import { identityDirectory } from "./identity-directory";

/** The signed-in user as the API sees it, or null. */
export async function getApiSession(): Promise<ApiSession | null> {
  const session = await auth();
  if (!session?.user?.id || !session.user.email) return null;
  return { userId: session.user.id, email: session.user.email, memberships: session.memberships };
}

/** Where install commands fetch the native agent: the console's own downloads unless configured. */
export function agentDownloadUrl(): string {
  return env.AGENT_DOWNLOAD_URL ?? new URL("/downloads/agent", env.AUTH_URL).href;
}

/** tRPC context for the current request (route handler or server component). */
export async function createRequestContext() {
  const session = await getApiSession();
  const cookieValue = (await cookies()).get(ACTIVE_ORGANIZATION_COOKIE)?.value;
  return createTRPCContext({
    db,
    session,
    activeOrganizationSlug: pickActiveOrganization(cookieValue, session?.memberships ?? []),
    agentServerUrl: env.AGENT_SERVER_URL ?? null,
    agentDownloadUrl: agentDownloadUrl(),
    mimirUrl: env.MIMIR_URL,
    fleetChanges,
    gateway: gatewayConnection(),
    identityDirectory,
    fairShare,
    apiLatency,
  });
}
