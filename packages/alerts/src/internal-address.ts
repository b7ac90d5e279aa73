import { BlockList, isIP } from "node:net";

/**
 * Whether an address is one a tenant-named URL must not reach from inside the control plane:
 * loopback, private, link-local, CGNAT, multicast or reserved. Shared by the API's input checks
 * (webhook URLs) and the gateway's connection-time checks (webhooks, artifact imports).
 */
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

export function isInternalAddress(address: string): boolean {
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it carries. (A ::ffff:0:0/96
  // rule would not do: BlockList matches every IPv4 address against it.)
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return isInternalAddress(mapped);
  // Other spellings of a mapped address (::ffff:7f00:1): refused rather than decoded.
  if (/^::ffff:/i.test(address)) return true;
  const family = isIP(address);
  if (family === 0) return true;
  return internal.check(address, family === 4 ? "ipv4" : "ipv6");
}
