import "server-only";
import type { GatewayConnection } from "@edgefleet/api";
import { env } from "~/env";

/** The gateway's internal API (site leaf bundles, enrollment credentials), when its URL and secret are set. */
export function gatewayConnection(): GatewayConnection | null {
  const [url, ...otherUrls] = env.GATEWAY_URL ?? [];
  return url && env.GATEWAY_INTERNAL_TOKEN
    ? { url, otherUrls, internalToken: env.GATEWAY_INTERNAL_TOKEN }
    : null;
}
