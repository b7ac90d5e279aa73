import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { COMMANDS, PROBE_MAX_BYTES, PROBE_MAX_MS, PROBE_TARGETS } from "@edgefleet/agent-sdk/protocol";
import { z } from "zod";
import { type ArtifactService, OrganizationNotFoundError } from "../artifacts/artifact-service.js";
import { ArtifactStoreUnavailableError, SHA256_HEX } from "../artifacts/bucket.js";
import { ArtifactFetchError } from "../artifacts/fetch-url.js";
import {
  ArtifactHashMismatchError,
  ArtifactTooLargeError,
  ArtifactTruncatedError,
} from "../artifacts/store-artifact.js";
import { type LogSessionService, openLogSessionRequest } from "../edge/commands/log-sessions.js";
import type { NodeCommandService } from "../edge/commands/node-command-service.js";
import {
  type LeafBundle,
  type LeafBundleInput,
  SiteNotFoundError,
  siteCacheOptions,
} from "../sites/leaf-bundle.js";
import { CPU_PROFILE_MAX_SECONDS, ProfileBusyError, takeCpuProfile } from "./cpu-profile.js";

/**
 * The gateway's internal API, for the control plane's own services (the console's API) and
 * nobody else: the gateway alone holds the NATS signing keys, so whatever needs them (a site's
 * leaf credentials) is asked of it here. Every call carries the shared secret
 * GATEWAY_INTERNAL_TOKEN as `Authorization: Bearer …`; without the variable the API is off.
 *
 *   POST /internal/sites/{siteId}/leaf-bundle   {organizationId, listen?, credentialsPath?,
 *        siteCache?: {storeDir?, maxBytes?} | null} → {config, creds, companions, expiresAt}; the
 *        site artifact cache is on unless siteCache is null (the site-leaf CLI's code path)
 *   GET  /internal/enroll-credentials           → {creds}  (the public enrollment credentials)
 *   PUT  /internal/orgs/{orgId}/artifacts       body = the artifact (streamed), optional header
 *        `x-artifact-sha256` (the content must hash to it) → {sha256, size, deduplicated};
 *        413 past GATEWAY_ARTIFACT_MAX_BYTES, 400 on a hash mismatch or a cut body (nothing kept)
 *   POST /internal/orgs/{orgId}/artifacts/import {url, sha256?} → {sha256, size, deduplicated}:
 *        fetches an https URL into the bucket (synchronously; the importer does it for versions)
 *   GET  /internal/orgs/{orgId}/artifacts/{sha256} → {sha256, size}, 404 when not in that org's bucket
 *   POST /internal/orgs/{orgId}/node-commands {nodeIds, cmd, app?, timeoutMs?} → {results: [one per
 *        node: {nodeId, ok, ms, result} | {nodeId, ok: false, ms, code, error}]}; waits for the nodes
 *   POST /internal/orgs/{orgId}/node-probes {nodeId, to, bytes, ms} → {result: one node's outcome}
 *   POST /internal/orgs/{orgId}/log-sessions {nodeId, app, tail?, follow?, budgetBytes?} →
 *        {ok: true, poll} | {ok: false, code, error}; waits for the history
 *   POST /internal/orgs/{orgId}/log-sessions/{sessionId}/poll → {poll}; 404 when no such session
 *   POST /internal/orgs/{orgId}/log-sessions/{sessionId}/close → {closed}
 *   GET  /internal/debug/cpu-profile?seconds=N  → a V8 CPU profile of this process over N s (1–120),
 *        the .cpuprofile format; 409 while another one is being taken
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
  /** Artifact upload/import into the organizations' object store buckets. */
  artifacts?: ArtifactService | null;
  /** Commands to nodes over NATS. */
  nodeCommands?: Pick<NodeCommandService, "run" | "probe"> | null;
  /** Live log sessions over NATS. */
  logSessions?: Pick<LogSessionService, "open" | "poll" | "close"> | null;
}

export const INTERNAL_PREFIX = "/internal/";
const LEAF_BUNDLE_PATH = /^\/internal\/sites\/([^/]+)\/leaf-bundle$/;
const ENROLL_CREDENTIALS_PATH = "/internal/enroll-credentials";
const ARTIFACTS_PATH = /^\/internal\/orgs\/([^/]+)\/artifacts(?:\/(import|[^/]+))?$/;
const NODE_COMMANDS_PATH = /^\/internal\/orgs\/([^/]+)\/node-commands$/;
const NODE_PROBES_PATH = /^\/internal\/orgs\/([^/]+)\/node-probes$/;
const CPU_PROFILE_PATH = "/internal/debug/cpu-profile";
const LOG_SESSIONS_PATH =
  /^\/internal\/orgs\/([^/]+)\/log-sessions(?:\/([A-Za-z0-9_-]{1,32})\/(poll|close))?$/;

export const nodeProbeRequest = z
  .object({
    nodeId: z.uuid(),
    to: z.enum(PROBE_TARGETS),
    bytes: z.int().min(1).max(PROBE_MAX_BYTES),
    ms: z.int().min(100).max(PROBE_MAX_MS),
  })
  .strict();

/** Most nodes one command call names (a console selection page); diagnostics name one. */
export const MAX_COMMAND_NODES = 100;

export const nodeCommandRequest = z
  .object({
    nodeIds: z.array(z.uuid()).min(1).max(MAX_COMMAND_NODES),
    cmd: z.enum(COMMANDS),
    app: z.string().min(1).max(128).optional(),
    timeoutMs: z.int().min(500).max(30_000).default(10_000),
  })
  .strict()
  .refine((body) => !["restart", "stop", "start", "health"].includes(body.cmd) || body.app !== undefined, {
    message: "restart, stop, start and health name an app",
    path: ["app"],
  })
  .refine((body) => body.cmd !== "diag" || body.nodeIds.length === 1, {
    message: "a diagnostics bundle is collected from one node at a time",
    path: ["nodeIds"],
  });

export const importRequest = z
  .object({
    url: z.string().min(1).max(2048),
    sha256: z.string().regex(SHA256_HEX, "sha256 must be 64 lowercase hex digits").optional(),
  })
  .strict();
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
    /** The site artifact cache on the leaf: on unless null (defaults: siteCacheOptions). */
    siteCache: siteCacheOptions.nullable().prefault({}),
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
  if (path === CPU_PROFILE_PATH) return CPU_PROFILE_PATH;
  if (LEAF_BUNDLE_PATH.test(path)) return "/internal/sites/:siteId/leaf-bundle";
  if (NODE_COMMANDS_PATH.test(path)) return "/internal/orgs/:orgId/node-commands";
  if (NODE_PROBES_PATH.test(path)) return "/internal/orgs/:orgId/node-probes";
  const logs = LOG_SESSIONS_PATH.exec(path);
  if (logs)
    return logs[3]
      ? `/internal/orgs/:orgId/log-sessions/:id/${logs[3]}`
      : "/internal/orgs/:orgId/log-sessions";
  const artifacts = ARTIFACTS_PATH.exec(path);
  if (artifacts) {
    if (artifacts[2] === undefined) return "/internal/orgs/:orgId/artifacts";
    return artifacts[2] === "import"
      ? "/internal/orgs/:orgId/artifacts/import"
      : "/internal/orgs/:orgId/artifacts/:sha256";
  }
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
    if (path === CPU_PROFILE_PATH) {
      requireMethod(req, res, "GET");
      const raw = new URL(req.url ?? "", "http://gateway.invalid").searchParams.get("seconds") ?? "30";
      const seconds = Number(raw);
      if (!Number.isInteger(seconds) || seconds < 1 || seconds > CPU_PROFILE_MAX_SECONDS)
        throw new HttpError(
          400,
          `seconds must be an integer from 1 to ${CPU_PROFILE_MAX_SECONDS}, got ${raw}`,
        );
      try {
        return { status: 200, body: await takeCpuProfile(seconds) };
      } catch (error) {
        if (error instanceof ProfileBusyError) throw new HttpError(409, error.message);
        throw error;
      }
    }
    const commandsOrg = NODE_COMMANDS_PATH.exec(path)?.[1];
    if (commandsOrg !== undefined) return await handleNodeCommands(deps, req, res, commandsOrg);
    const probesOrg = NODE_PROBES_PATH.exec(path)?.[1];
    if (probesOrg !== undefined) return await handleNodeProbes(deps, req, res, probesOrg);
    const logRoute = LOG_SESSIONS_PATH.exec(path);
    if (logRoute) return await handleLogSessions(deps, req, res, logRoute[1] ?? "", logRoute[2], logRoute[3]);
    const artifactRoute = ARTIFACTS_PATH.exec(path);
    if (artifactRoute) return await handleArtifacts(deps, req, res, artifactRoute[1] ?? "", artifactRoute[2]);
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
    const artifactError = artifactErrorAnswer(error);
    if (artifactError) return artifactError;
    throw error;
  }
}

function artifactErrorAnswer(error: unknown): { status: number; body: Record<string, unknown> } | null {
  if (error instanceof ArtifactTooLargeError) {
    return { status: 413, body: { error: error.message, maxBytes: error.maxBytes } };
  }
  if (error instanceof ArtifactHashMismatchError) {
    return { status: 400, body: { error: error.message, field: "sha256", actual: error.actual } };
  }
  if (error instanceof ArtifactTruncatedError) return { status: 400, body: { error: error.message } };
  if (error instanceof ArtifactFetchError)
    return { status: 422, body: { error: error.message, field: "url" } };
  if (error instanceof OrganizationNotFoundError) return { status: 404, body: { error: error.message } };
  if (error instanceof ArtifactStoreUnavailableError) {
    return { status: 503, body: { error: `the artifact store is unavailable: ${error.message}` } };
  }
  return null;
}

async function handleArtifacts(
  deps: InternalApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  organizationId: string,
  sub: string | undefined,
): Promise<{ status: number; body: unknown }> {
  const artifacts = deps.artifacts;
  if (!artifacts) throw new HttpError(503, "artifacts are not available on this gateway");
  if (!z.uuid().safeParse(organizationId).success) {
    throw new HttpError(404, `organization ${organizationId} not found`);
  }
  if (sub === undefined) {
    requireMethod(req, res, "PUT");
    const declaredSha = req.headers["x-artifact-sha256"];
    if (declaredSha !== undefined && (typeof declaredSha !== "string" || !SHA256_HEX.test(declaredSha))) {
      throw new HttpError(400, "x-artifact-sha256 must be 64 lowercase hex digits");
    }
    const length = Number(req.headers["content-length"]);
    const size = Number.isSafeInteger(length) && length >= 0 ? length : undefined;
    const stored = await artifacts.upload(organizationId, req, { sha256: declaredSha, size });
    return { status: 200, body: stored };
  }
  if (sub === "import") {
    requireMethod(req, res, "POST");
    const parsed = importRequest.safeParse(await readJson(req));
    if (!parsed.success) {
      throw new HttpError(
        400,
        parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
      );
    }
    const stored = await artifacts.importUrl(organizationId, parsed.data.url, parsed.data.sha256);
    return { status: 200, body: stored };
  }
  requireMethod(req, res, "GET");
  const found = await artifacts.info(organizationId, sub);
  if (!found) throw new HttpError(404, `artifact ${sub} not found`);
  return { status: 200, body: found };
}

async function handleNodeCommands(
  deps: InternalApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  organizationId: string,
): Promise<{ status: number; body: unknown }> {
  requireMethod(req, res, "POST");
  if (!z.uuid().safeParse(organizationId).success) {
    throw new HttpError(404, `organization ${organizationId} not found`);
  }
  const parsed = nodeCommandRequest.safeParse(await readJson(req));
  if (!parsed.success) {
    throw new HttpError(400, parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  }
  if (!deps.nodeCommands) throw new HttpError(503, "node commands are not available on this gateway");
  const { app, ...rest } = parsed.data;
  const results = await deps.nodeCommands.run({
    organizationId,
    ...rest,
    ...(app !== undefined ? { app } : {}),
  });
  return { status: 200, body: { results } };
}

function issuesText(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
}

function requireOrganization(organizationId: string): void {
  if (!z.uuid().safeParse(organizationId).success) {
    throw new HttpError(404, `organization ${organizationId} not found`);
  }
}

async function handleNodeProbes(
  deps: InternalApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  organizationId: string,
): Promise<{ status: number; body: unknown }> {
  requireMethod(req, res, "POST");
  requireOrganization(organizationId);
  const parsed = nodeProbeRequest.safeParse(await readJson(req));
  if (!parsed.success) throw new HttpError(400, issuesText(parsed.error));
  if (!deps.nodeCommands) throw new HttpError(503, "node probes are not available on this gateway");
  const result = await deps.nodeCommands.probe({ organizationId, ...parsed.data });
  return { status: 200, body: { result } };
}

async function handleLogSessions(
  deps: InternalApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  organizationId: string,
  sessionId: string | undefined,
  action: string | undefined,
): Promise<{ status: number; body: unknown }> {
  requireMethod(req, res, "POST");
  requireOrganization(organizationId);
  const sessions = deps.logSessions;
  if (!sessions) throw new HttpError(503, "live logs are not available on this gateway");
  if (sessionId === undefined) {
    const parsed = openLogSessionRequest.safeParse(await readJson(req));
    if (!parsed.success) throw new HttpError(400, issuesText(parsed.error));
    return { status: 200, body: await sessions.open(organizationId, parsed.data) };
  }
  if (action === "close") return { status: 200, body: { closed: sessions.close(organizationId, sessionId) } };
  const poll = sessions.poll(organizationId, sessionId);
  if (!poll) throw new HttpError(404, `log session ${sessionId} not found (it ended, or the viewer left)`);
  return { status: 200, body: { poll } };
}
