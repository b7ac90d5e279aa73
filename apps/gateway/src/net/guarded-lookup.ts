import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isInternalAddress } from "@edgefleet/alerts";

/**
 * A `lookup` for node:http(s) requests to a URL a tenant named: the address check runs in the
 * socket's own DNS resolution, so a name cannot resolve to a public address for a check and to
 * an internal one for the connection. `refusal` words the error for the caller's users
 * (its `code` is EF_INTERNAL_ADDRESS).
 */
export function guardedLookup(allowPrivate: boolean, refusal: (hostname: string, address: string) => string) {
  return (
    hostname: string,
    options: object,
    callback: (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      const blocked = allowPrivate ? undefined : list.find((entry) => isInternalAddress(entry.address));
      if (blocked) {
        const refused: NodeJS.ErrnoException = new Error(refusal(hostname, blocked.address));
        refused.code = "EF_INTERNAL_ADDRESS";
        return callback(refused, []);
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(new Error(`no address for ${hostname}`), []);
      callback(null, first.address, first.family);
    });
  };
}
