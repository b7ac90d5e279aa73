import { BlockList, isIP } from "node:net";

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

const internal = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  internal.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  internal.addSubnet(network, prefix, "ipv6");
}

/** Loopback, private, link-local, CGNAT, multicast or reserved (IPv4-mapped IPv6 judged as IPv4). */
export function isInternalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return isInternalAddress(mapped);
  if (/^::ffff:/i.test(address)) return true;
  const family = isIP(address);
  if (family === 0) return true;
  return internal.check(address, family === 4 ? "ipv4" : "ipv6");
}
