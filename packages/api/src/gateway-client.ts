/**
 * Client of the gateway's internal API (apps/gateway/src/http/internal-api.ts). The console's
 * API holds no NATS secrets: what needs them (a site's leaf credentials) is minted by the
 * gateway, which this asks over HTTP with the shared secret GATEWAY_INTERNAL_TOKEN.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { TRPCError } from "@trpc/server";
import { z } from "zod";

export interface GatewayConnection {
  /** Base URL of the gateway's HTTP server, e.g. http://127.0.0.1:8090. */
  url: string;
  /**
   * Other gateway replicas: a call that cannot reach one (connection refused: nothing was sent)
   * goes to the next, and later calls start from the one that answered (docs/ha.md).
   */
  otherUrls?: string[];
  /** Shared secret of the internal API. */
  internalToken: string;
}

/** Per list of replicas: the one that answered last (log sessions live in one replica: stay there). */
const answeredLast = new Map<string, string>();

/** The replicas in the order to try them: the one that answered last first, then the others. */
export function gatewayUrls(gateway: GatewayConnection): string[] {
  const all = [gateway.url, ...(gateway.otherUrls ?? [])];
  const preferred = answeredLast.get(all.join(","));
  return preferred && all.includes(preferred) ? [preferred, ...all.filter((url) => url !== preferred)] : all;
}

function rememberAnswer(gateway: GatewayConnection, url: string): void {
  if (gateway.otherUrls?.length) answeredLast.set([gateway.url, ...gateway.otherUrls].join(","), url);
}

/** Errors that mean the request never reached the gateway, so another replica may take it. */
const NOT_REACHED = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);

function neverReached(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === "string" && NOT_REACHED.has(cause.code);
}

export const leafBundleSchema = z.object({
  config: z.string(),
  creds: z.string(),
  /** Files beside site.creds that leaf.conf names (the site's system link, enrollment), by name. */
  companions: z.record(z.string(), z.string()).default({}),
  /** When the site credentials expire (gateways before issue 8 did not say). */
  expiresAt: z.coerce.date().optional(),
});
export type LeafBundleFiles = z.infer<typeof leafBundleSchema>;

const TIMEOUT_MS = 15_000;

function requireGateway(gateway: GatewayConnection | null): GatewayConnection {
  if (!gateway) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: "the gateway is not configured for this console (GATEWAY_URL, GATEWAY_INTERNAL_TOKEN)",
    });
  }
  return gateway;
}

/** Calls the gateway; its error answers become typed errors that say what went wrong. */
async function call<T>(
  gateway: GatewayConnection | null,
  path: string,
  init: { method: "GET" | "POST"; body?: unknown; timeoutMs?: number },
  schema: z.ZodType<T>,
): Promise<T> {
  const connection = requireGateway(gateway);
  const urls = gatewayUrls(connection);
  let response: Response | undefined;
  for (const [index, url] of urls.entries()) {
    try {
      response = await fetch(new URL(path, url), {
        method: init.method,
        headers: {
          authorization: `Bearer ${connection.internalToken}`,
          ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        signal: AbortSignal.timeout(init.timeoutMs ?? TIMEOUT_MS),
      });
      rememberAnswer(connection, url);
      break;
    } catch (error) {
      // A timeout or a reset may have reached the gateway: only a refused connection moves on.
      if (index < urls.length - 1 && neverReached(error)) continue;
      throw new TRPCError({
        code: "SERVICE_UNAVAILABLE",
        message: `the gateway at ${url} did not answer: ${error instanceof Error ? error.message : String(error)}`,
        cause: error,
      });
    }
  }
  if (!response) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "no gateway answered" });
  const body = (await response.json().catch(() => null)) as unknown;
  if (response.ok) {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "the gateway sent an unexpected answer" });
  }
  const detail =
    body && typeof body === "object" && "error" in body ? String(body.error) : `HTTP ${response.status}`;
  if (response.status === 404) throw new TRPCError({ code: "NOT_FOUND", message: detail });
  if (response.status === 400) {
    throw new TRPCError({ code: "BAD_REQUEST", message: `the gateway refused the request: ${detail}` });
  }
  if (response.status === 503) {
    throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: `the gateway cannot do this: ${detail}` });
  }
  // 401 is our own mistake (a bug or a secret that differs between console and gateway).
  throw new TRPCError({
    code: "INTERNAL_SERVER_ERROR",
    message: `the gateway refused the request: ${detail}`,
  });
}

export function requestLeafBundle(
  gateway: GatewayConnection | null,
  input: {
    organizationId: string;
    siteId: string;
    listen: string;
    credentialsPath: string;
    /** The site artifact cache on the leaf; null: none (its nodes fetch from the hub). */
    siteCache: { storeDir: string; maxBytes: number } | null;
  },
): Promise<LeafBundleFiles> {
  const { siteId, ...body } = input;
  return call(
    gateway,
    `/internal/sites/${encodeURIComponent(siteId)}/leaf-bundle`,
    { method: "POST", body },
    leafBundleSchema,
  );
}

/** The public credentials agents present to ask for enrollment (the token is the real secret). */
export async function fetchEnrollCredentials(gateway: GatewayConnection | null): Promise<string> {
  const { creds } = await call(
    gateway,
    "/internal/enroll-credentials",
    { method: "GET" },
    z.object({ creds: z.string() }),
  );
  return creds;
}

/** What the gateway answered to an artifact upload. */
export type ArtifactUploadAnswer =
  | { ok: true; sha256: string; size: number }
  | { ok: false; status: number; error: string; field: string | null; maxBytes: number | null };

const uploadAnswerSchema = z.object({ sha256: z.string(), size: z.number().int() });

/**
 * Streams an artifact's bytes to the gateway, which stores them in the organization's bucket
 * (PUT /internal/orgs/{orgId}/artifacts). The body is passed on as it arrives and read no faster
 * than the gateway takes it: node:http with `drain`, because fetch() reads an upload body as fast
 * as it comes and buffers it (a 200 MB upload cost ~240 MB of memory that way, ~40 MB this way).
 * `declaredSha256` makes the gateway refuse content that hashes otherwise.
 */
export async function streamArtifactToGateway(
  gateway: GatewayConnection | null,
  input: {
    organizationId: string;
    body: ReadableStream<Uint8Array>;
    contentLength: number | null;
    declaredSha256: string | null;
  },
): Promise<ArtifactUploadAnswer> {
  const connection = requireGateway(gateway);
  const { internalToken } = connection;
  // A streamed body cannot be sent twice: the upload goes to the replica that answered last.
  const url = gatewayUrls(connection)[0] as string;
  const target = new URL(`/internal/orgs/${encodeURIComponent(input.organizationId)}/artifacts`, url);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  const upstream = send(target, {
    method: "PUT",
    headers: {
      authorization: `Bearer ${internalToken}`,
      "content-type": "application/octet-stream",
      ...(input.contentLength !== null ? { "content-length": String(input.contentLength) } : {}),
      ...(input.declaredSha256 ? { "x-artifact-sha256": input.declaredSha256 } : {}),
    },
  });
  const failed = (error: unknown): ArtifactUploadAnswer => ({
    ok: false,
    status: 0,
    error: `the upload did not reach the gateway: ${error instanceof Error ? error.message : String(error)}`,
    field: null,
    maxBytes: null,
  });
  // The gateway may answer before it read everything (413): then the rest is not sent.
  const answered = new Promise<{ status: number; text: string } | { error: unknown }>((resolve) => {
    upstream.once("response", async (response) => {
      let text = "";
      try {
        for await (const chunk of response) text += chunk;
        resolve({ status: response.statusCode ?? 0, text });
      } catch (error) {
        resolve({ error });
      }
    });
    upstream.once("error", (error) => resolve({ error }));
  });
  let gotAnswer = false;
  void answered.then(() => {
    gotAnswer = true;
  });
  const reader = input.body.getReader();
  try {
    for (;;) {
      if (gotAnswer) break;
      const { done, value } = await reader.read();
      if (done) break;
      if (!upstream.write(value)) {
        await Promise.race([new Promise((resolve) => upstream.once("drain", resolve)), answered]);
      }
    }
    if (!gotAnswer) upstream.end();
  } catch (error) {
    // The client's body failed (a cut upload): abort, so the gateway keeps nothing.
    upstream.destroy();
    return failed(error);
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const result = await answered;
  if ("error" in result) return failed(result.error);
  let body: Record<string, unknown> | null = null;
  try {
    body = JSON.parse(result.text) as Record<string, unknown>;
  } catch {
    body = null;
  }
  if (result.status >= 200 && result.status < 300) {
    const parsed = uploadAnswerSchema.safeParse(body);
    if (parsed.success) return { ok: true, ...parsed.data };
    throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "the gateway sent an unexpected answer" });
  }
  return {
    ok: false,
    status: result.status,
    error: typeof body?.error === "string" ? body.error : `HTTP ${result.status}`,
    field: typeof body?.field === "string" ? body.field : null,
    maxBytes: typeof body?.maxBytes === "number" ? body.maxBytes : null,
  };
}

const instanceAnswer = z.object({
  app: z.string(),
  ver: z.string().optional(),
  st: z.string(),
  why: z.string().optional(),
  rs: z.number(),
});

/** One node's answer from POST /internal/orgs/{orgId}/node-commands (the wire's short names). */
const nodeCommandAnswerSchema = z.union([
  z.object({
    nodeId: z.string(),
    ok: z.literal(true),
    ms: z.number(),
    result: z.object({
      inst: instanceAnswer.optional(),
      hl: z.object({ ok: z.boolean(), why: z.string().optional() }).optional(),
      rep: z.object({ st: z.number(), mx: z.number() }).optional(),
      diag: z
        .object({
          av: z.string(),
          os: z.string(),
          arch: z.string(),
          up: z.number(),
          cfg: z.record(z.string(), z.string()),
          du: z.number(),
          dt: z.number(),
          log: z.array(z.string()),
          inst: z.array(instanceAnswer),
        })
        .optional(),
    }),
  }),
  z.object({ nodeId: z.string(), ok: z.literal(false), ms: z.number(), code: z.string(), error: z.string() }),
]);
export type NodeCommandAnswer = z.infer<typeof nodeCommandAnswerSchema>;

/** Runs a command on nodes through the gateway; waits for the nodes (up to timeoutMs each, in parallel). */
export async function runNodeCommand(
  gateway: GatewayConnection | null,
  input: { organizationId: string; nodeIds: string[]; cmd: string; app?: string; timeoutMs: number },
): Promise<NodeCommandAnswer[]> {
  const { organizationId, ...body } = input;
  const { results } = await call(
    gateway,
    `/internal/orgs/${encodeURIComponent(organizationId)}/node-commands`,
    { method: "POST", body, timeoutMs: input.timeoutMs + 5_000 },
    z.object({ results: z.array(nodeCommandAnswerSchema) }),
  );
  return results;
}

/** A log session's state as the gateway answers a poll (apps/gateway/src/edge/commands/log-sessions.ts). */
const logPollSchema = z.object({
  sessionId: z.string(),
  nodeId: z.string(),
  app: z.string(),
  lines: z.array(z.string()),
  lost: z.number(),
  bytes: z.number(),
  budgetBytes: z.number(),
  ended: z.boolean(),
  endReason: z.string().nullable(),
});
export type LogPollAnswer = z.infer<typeof logPollSchema>;

export type LogOpenAnswer = { ok: true; poll: LogPollAnswer } | { ok: false; code: string; error: string };

/** Opens a live log session on a node; waits for its history (or the refusal). */
export function openLogSession(
  gateway: GatewayConnection | null,
  input: {
    organizationId: string;
    nodeId: string;
    app: string;
    tail: number;
    follow: boolean;
    budgetBytes: number;
  },
): Promise<LogOpenAnswer> {
  const { organizationId, ...body } = input;
  return call(
    gateway,
    `/internal/orgs/${encodeURIComponent(organizationId)}/log-sessions`,
    { method: "POST", body, timeoutMs: 20_000 },
    z.union([
      z.object({ ok: z.literal(true), poll: logPollSchema }),
      z.object({ ok: z.literal(false), code: z.string(), error: z.string() }),
    ]),
  );
}

/** The viewer's poll (also its heartbeat): NOT_FOUND when the session is gone. */
export async function pollLogSession(
  gateway: GatewayConnection | null,
  input: { organizationId: string; sessionId: string },
): Promise<LogPollAnswer> {
  const { poll } = await call(
    gateway,
    `/internal/orgs/${encodeURIComponent(input.organizationId)}/log-sessions/${encodeURIComponent(input.sessionId)}/poll`,
    { method: "POST", body: {} },
    z.object({ poll: logPollSchema }),
  );
  return poll;
}

export async function closeLogSession(
  gateway: GatewayConnection | null,
  input: { organizationId: string; sessionId: string },
): Promise<boolean> {
  const { closed } = await call(
    gateway,
    `/internal/orgs/${encodeURIComponent(input.organizationId)}/log-sessions/${encodeURIComponent(input.sessionId)}/close`,
    { method: "POST", body: {} },
    z.object({ closed: z.boolean() }),
  );
  return closed;
}

const probeAnswerSchema = z.union([
  z.object({
    nodeId: z.string(),
    ok: z.literal(true),
    ms: z.number(),
    result: z.object({
      prb: z.object({
        to: z.enum(["leaf", "hub"]),
        by: z.number(),
        ms: z.number(),
        via: z.string().optional(),
      }),
    }),
  }),
  z.object({ nodeId: z.string(), ok: z.literal(false), ms: z.number(), code: z.string(), error: z.string() }),
]);
export type ProbeAnswer = z.infer<typeof probeAnswerSchema>;

/** Runs a throughput probe from a node; waits for it (its time bound plus a margin). */
export async function runNodeProbe(
  gateway: GatewayConnection | null,
  input: { organizationId: string; nodeId: string; to: "leaf" | "hub"; bytes: number; ms: number },
): Promise<ProbeAnswer> {
  const { organizationId, ...body } = input;
  const { result } = await call(
    gateway,
    `/internal/orgs/${encodeURIComponent(organizationId)}/node-probes`,
    { method: "POST", body, timeoutMs: input.ms + 10_000 },
    z.object({ result: probeAnswerSchema }),
  );
  return result;
}
