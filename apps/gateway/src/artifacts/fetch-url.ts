import type { IncomingMessage } from "node:http";
import { request } from "node:https";
import { isIP } from "node:net";
import { isInternalAddress } from "@edgefleet/alerts";
import { guardedLookup } from "../net/guarded-lookup";

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
      lookup: guardedLookup(
        options.allowPrivateAddresses,
        (hostname, address) =>
          `url: ${hostname} resolves to an internal address (${address}); imports reach public addresses only`,
      ),
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
