import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { type LeafBundle, type LeafBundleInput, SiteNotFoundError } from "../sites/leaf-bundle.js";

/**
 * The gateway's internal API, for the control plane's own services (the console's API) and
 * nobody else: the gateway alone holds the NATS signing keys, so whatever needs them (a site's
 * leaf credentials) is asked of it here. Every call carries the shared secret
 * GATEWAY_INTERNAL_TOKEN as `Authorization: Bearer …`; without the variable the API is off.
 *
 *   POST /internal/sites/{siteId}/leaf-bundle   {organizationId, listen?, credentialsPath?} → {config, creds}
 *   GET  /internal/enroll-credentials           → {creds}  (the public enrollment credentials)
 */
export interface InternalApiDeps {
  /** Shared secret; undefined turns the internal API off (503). */
  token: string | undefined;
  /** The hub's leafnode URL(s) as sites reach them (NATS_LEAF_URL); empty: no leaf bundles. */
  hubLeafUrls: string[];
  /** Builds a leaf bundle; null when the gateway has no NATS secrets (enrollment disabled). */
  createLeafBundle: ((input: LeafBundleInput) => Promise<LeafBundle>) | null;
  /** Public enrollment credentials agents enroll with; null when enrollment is disabled. */
  enrollCredentials: string | null;
}

export const INTERNAL_PREFIX = "/internal/";
const LEAF_BUNDLE_PATH = /^\/internal\/sites\/([^/]+)\/leaf-bundle$/;
const ENROLL_CREDENTIALS_PATH = "/internal/enroll-credentials";
const MAX_BODY_BYTES = 16 * 1024;

/** Where a site's agents connect on the leaf machine: host:port. */
const listenAddress = z
  .string()
  .regex(/^[A-Za-z0-9.:[\]-]+:\d{1,5}$/, "listen must be host:port, e.g. 0.0.0.0:4222");

export const leafBundleRequest = z
  .object({
    organizationId: z.uuid(),
    listen: listenAddress.default("0.0.0.0:4222"),
    /** Absolute path of site.creds on the leaf machine (leaf.conf refers to it). */
    credentialsPath: z
      .string()
      .regex(/^\/[^\s"\\]*$/, "credentialsPath must be an absolute path without spaces or quotes")
      .max(500)
      .default("/etc/edgefleet/site.creds"),
  })
  .strict();

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Route label for the request metrics (the site id is not a label: unbounded cardinality). */
export function internalRouteOf(path: string): string | null {
  if (path === ENROLL_CREDENTIALS_PATH) return ENROLL_CREDENTIALS_PATH;
  if (LEAF_BUNDLE_PATH.test(path)) return "/internal/sites/:siteId/leaf-bundle";
  return null;
}

function authorize(deps: InternalApiDeps, req: IncomingMessage): void {
  if (!deps.token) throw new HttpError(503, "the internal API is off: GATEWAY_INTERNAL_TOKEN is not set");
  const presented = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
  if (!presented) throw new HttpError(401, "send Authorization: Bearer <GATEWAY_INTERNAL_TOKEN>");
  const expected = Buffer.from(deps.token, "utf8");
  const given = Buffer.from(presented, "utf8");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new HttpError(401, "wrong internal token");
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, "body is not JSON");
  }
}

function requireMethod(req: IncomingMessage, res: ServerResponse, method: string): void {
  if (req.method !== method) {
    res.setHeader("allow", method);
    throw new HttpError(405, `${req.method} is not allowed here; use ${method}`);
  }
}

/** Answers one request under /internal/; the caller has checked the prefix. Errors become {error}. */
export async function handleInternalRequest(
  deps: InternalApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<{ status: number; body: unknown }> {
  try {
    authorize(deps, req);
    if (path === ENROLL_CREDENTIALS_PATH) {
      requireMethod(req, res, "GET");
      if (!deps.enrollCredentials) throw new HttpError(503, "enrollment is disabled on this gateway");
      return { status: 200, body: { creds: deps.enrollCredentials } };
    }
    const siteId = LEAF_BUNDLE_PATH.exec(path)?.[1];
    if (siteId === undefined) throw new HttpError(404, `no route for ${path}`);
    requireMethod(req, res, "POST");
    if (!z.uuid().safeParse(siteId).success) throw new HttpError(404, `site ${siteId} not found`);
    const parsed = leafBundleRequest.safeParse(await readJson(req));
    if (!parsed.success) {
      throw new HttpError(
        400,
        parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
      );
    }
    if (!deps.createLeafBundle) {
      throw new HttpError(503, "enrollment is disabled on this gateway (no NATS_TENANCY_FILE)");
    }
    if (deps.hubLeafUrls.length === 0) {
      throw new HttpError(
        503,
        "NATS_LEAF_URL is not set: the gateway does not know where sites reach the hub",
      );
    }
    const bundle = await deps.createLeafBundle({
      ...parsed.data,
      siteId,
      hubLeafUrls: deps.hubLeafUrls,
    });
    return { status: 200, body: bundle };
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, body: { error: error.message } };
    if (error instanceof SiteNotFoundError) return { status: 404, body: { error: error.message } };
    throw error;
  }
}
