import { isIP } from "node:net";
import { isInternalAddress } from "./internal-address";

/**
 * Input check of a webhook URL a tenant names: http(s) only, no credentials in it, and no
 * loopback, private, link-local or otherwise internal literal address or local name (the relay
 * runs inside the control plane: a webhook must not reach its Postgres, Mimir or NATS). Names are
 * checked again at delivery, where they resolve (the gateway refuses internal addresses there).
 * Returns the problem, or null when the URL is acceptable.
 */
export function webhookUrlProblem(
  raw: string,
  options: { allowPrivateAddresses?: boolean } = {},
): string | null {
  if (!URL.canParse(raw)) return "not a valid URL";
  const url = new URL(raw);
  if (url.protocol !== "https:" && url.protocol !== "http:") return "only http:// and https:// URLs";
  if (url.username || url.password) return "credentials in the URL are not accepted (the body is signed)";
  // Tests (and private deployments that opt in) deliver to receivers on loopback.
  if (options.allowPrivateAddresses) return null;
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host.endsWith(".local") ||
    host.endsWith(".internal")
  ) {
    return `${host} is a local name; webhooks reach public addresses only`;
  }
  if (isIP(host) !== 0 && isInternalAddress(host)) {
    return `${host} is a loopback, private or link-local address; webhooks reach public addresses only`;
  }
  return null;
}
