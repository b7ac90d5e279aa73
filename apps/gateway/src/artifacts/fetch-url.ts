import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { IncomingMessage } from "node:http";
import { request } from "node:https";
import { BlockList, isIP } from "node:net";

/**
 * Fetches an artifact from an HTTPS URL for the importer, as a stream (never buffered whole).
 * A tenant names the URL and the gateway sits inside the control plane, so it is an SSRF
 * vector: only https, and unless allowed (tests, private mirrors) no loopback, private, link-local
 * or otherwise internal address. The check runs in the socket's own DNS lookup, so a name cannot
 * resolve to a public address for the check and to an internal one for the connection.
 */

export interface FetchUrlOptions {
  maxBytes: number;
  /** Let the URL reach loopback/private addresses (GATEWAY_ARTIFACT_IMPORT_ALLOW_PRIVATE). */
  allowPrivateAddresses: boolean;
  /** No byte for this long: the fetch fails. */
  idleTimeoutMs?: number;
}

/** Why an import failed, and whether trying again later could help. */
export class ArtifactFetchError extends Error {
  override name = "ArtifactFetchError";
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

const MAX_REDIRECTS = 5;

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

/** Checks an https URL as an import source; the error message names the problem. */
export function checkImportUrl(raw: string): URL {
  if (!URL.canParse(raw)) throw new ArtifactFetchError("url: not a valid URL", false);
  const url = new URL(raw);
  if (url.protocol !== "https:")
    throw new ArtifactFetchError("url: only https:// URLs can be imported", false);
  if (url.username || url.password) {
    throw new ArtifactFetchError("url: credentials in the URL are not accepted", false);
  }
  return url;
}

function guardedLookup(allowPrivate: boolean) {
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
        const refusal: NodeJS.ErrnoException = new Error(
          `url: ${hostname} resolves to an internal address (${blocked.address}); imports reach public addresses only`,
        );
        refusal.code = "EF_INTERNAL_ADDRESS";
        return callback(refusal, []);
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(new Error(`no address for ${hostname}`), []);
      callback(null, first.address, first.family);
    });
  };
}

function get(url: URL, options: FetchUrlOptions): Promise<IncomingMessage> {
  // A literal address never goes through `lookup`: check it here.
  const literal = url.hostname.replace(/^\[|\]$/g, "");
  if (!options.allowPrivateAddresses && isIP(literal) !== 0 && isInternalAddress(literal)) {
    return Promise.reject(
      new ArtifactFetchError(
        `url: ${literal} is an internal address; imports reach public addresses only`,
        false,
      ),
    );
  }
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "GET",
      lookup: guardedLookup(options.allowPrivateAddresses),
      headers: { "user-agent": "edgefleet-gateway artifact importer", accept: "*/*" },
    });
    req.setTimeout(options.idleTimeoutMs ?? 30_000, () =>
      req.destroy(new ArtifactFetchError(`url: no answer from ${url.host} in time`, true)),
    );
    req.on("response", resolve);
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (error instanceof ArtifactFetchError) return reject(error);
      if (error.code === "EF_INTERNAL_ADDRESS") return reject(new ArtifactFetchError(error.message, false));
      if (error.code === "ENOTFOUND") {
        return reject(new ArtifactFetchError(`url: host ${url.hostname} not found`, true));
      }
      const tls = error.code?.startsWith("ERR_TLS") || /certificate|self.signed/i.test(error.message);
      reject(new ArtifactFetchError(`url: ${tls ? "TLS failed" : "fetch failed"}: ${error.message}`, !tls));
    });
    req.end();
  });
}

/**
 * The response body of `raw` (redirects followed, each hop checked again), with its declared
 * length if any. Non-2xx answers are errors: 4xx permanent, 5xx and 429 retryable.
 */
export async function fetchArtifactUrl(
  raw: string,
  options: FetchUrlOptions,
): Promise<{ body: IncomingMessage; contentLength: number | undefined }> {
  let url = checkImportUrl(raw);
  for (let hop = 0; ; hop++) {
    const response = await get(url, options);
    const status = response.statusCode ?? 0;
    if (status >= 300 && status < 400 && response.headers.location) {
      response.resume();
      if (hop >= MAX_REDIRECTS)
        throw new ArtifactFetchError(`url: more than ${MAX_REDIRECTS} redirects`, false);
      url = checkImportUrl(new URL(response.headers.location, url).toString());
      continue;
    }
    if (status < 200 || status >= 300) {
      response.resume();
      throw new ArtifactFetchError(
        `url: ${url.host} answered HTTP ${status}`,
        status >= 500 || status === 429 || status === 408,
      );
    }
    const length = Number(response.headers["content-length"]);
    const contentLength = Number.isSafeInteger(length) && length >= 0 ? length : undefined;
    if (contentLength !== undefined && contentLength > options.maxBytes) {
      response.destroy();
      throw new ArtifactFetchError(
        `url: the artifact is ${contentLength} bytes, larger than the limit of ${options.maxBytes}`,
        false,
      );
    }
    return { body: response, contentLength };
  }
}
