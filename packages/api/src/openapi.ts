/**
 * The REST API: the same tRPC procedures, exposed by trpc-to-openapi wherever a procedure has
 * `meta.openapi`, with an OpenAPI 3.1 document generated from their zod schemas. Authentication
 * is by API key only (`Authorization: Bearer efk_…`): the key's organization is the tenant.
 * Errors have one shape, `{ code, message, issues? }` (issues: zod's, for invalid input).
 */
import type { Db } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { createOpenApiFetchHandler, generateOpenApiDocument } from "trpc-to-openapi";
import { ZodError } from "zod";
import { authenticateApiKey } from "./domain/api-keys";
import type { GatewayConnection } from "./gateway-client";
import { jsonError, readBoundedBody, withBody } from "./http-guards";
import type { IdentityDirectory } from "./keycloak-directory";
import { appRouter, createCaller } from "./root";
import { createTRPCContext } from "./trpc";

export const REST_BASE_PATH = "/api/v1";

/** Issues of an invalid-input error: zod's message and where in the input it points. */
const issueSchema = {
  type: "object",
  properties: {
    message: { type: "string" },
    path: { type: "array", items: { type: ["string", "number"] } },
  },
  required: ["message", "path"],
  additionalProperties: false,
} as const;

const errorSchema = {
  type: "object",
  properties: {
    code: { type: "string", description: "tRPC error code, e.g. NOT_FOUND, CONFLICT" },
    message: { type: "string" },
    issues: { type: "array", items: issueSchema },
  },
  required: ["code", "message"],
  additionalProperties: false,
} as const;

function errorResponse(description: string) {
  return { description, content: { "application/json": { schema: { $ref: "#/components/schemas/error" } } } };
}

type OpenApiDocument = ReturnType<typeof generateOpenApiDocument>;
/** Generating walks every procedure's schemas: once per origin is enough (the router is fixed). */
const documentsByBaseUrl = new Map<string, OpenApiDocument>();

/** The OpenAPI 3.1 document with its server at `<baseUrl>/api/v1`. Treat it as read-only (shared). */
export function createOpenApiDocument(baseUrl: string): OpenApiDocument {
  const cached = documentsByBaseUrl.get(baseUrl);
  if (cached) return cached;
  const document = generateDocument(baseUrl);
  if (documentsByBaseUrl.size < 16) documentsByBaseUrl.set(baseUrl, document);
  return document;
}

function generateDocument(baseUrl: string): OpenApiDocument {
  const document = generateOpenApiDocument(appRouter, {
    title: "Edgefleet API",
    version: "1.0.0",
    openApiVersion: "3.1.0",
    baseUrl: `${baseUrl.replace(/\/$/, "")}${REST_BASE_PATH}`,
    description:
      "Manage an Edgefleet organization from scripts. Authenticate with an API key: `Authorization: Bearer efk_…`; " +
      "the key's organization and role apply. Lists are paginated by cursor: pass `limit`, then the `nextCursor` " +
      "of a page as `cursor` for the next one (null: last page). Errors are `{ code, message, issues? }`.",
    securitySchemes: {
      apiKey: { type: "http", scheme: "bearer", description: "An API key (efk_…) created in the console" },
    },
  });
  document.paths = { ...document.paths, [AUDIT_EXPORT_PATH]: auditExportOperation(document) };
  // The generator documents issues as `{ message }`; ours also say where (see toErrorBody).
  const schemas = document.components?.schemas ?? {};
  for (const schema of Object.values(schemas)) {
    const issues = (schema as { properties?: { issues?: { items?: unknown } } }).properties?.issues;
    if (issues) issues.items = issueSchema;
  }
  schemas.error = errorSchema as unknown as (typeof schemas)[string];
  // Any tenant row may be another organization's (404), and any status may come: say so everywhere.
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item as Record<string, { responses?: Record<string, unknown> }>)) {
      if (!operation?.responses) continue;
      operation.responses["404"] ??= errorResponse("Not found, or not in the key's organization");
      operation.responses.default ??= errorResponse(
        "Any other error (409 conflict, 412 precondition failed, …)",
      );
    }
  }
  return document;
}

/** The export streams text, which trpc-to-openapi cannot describe: documented by hand, same filters as /audit. */
function auditExportOperation(document: OpenApiDocument) {
  const list = document.paths?.["/audit"]?.get;
  const filters = (list?.parameters ?? []).filter(
    (p) => !("name" in p) || !["limit", "cursor"].includes(p.name),
  );
  return {
    get: {
      operationId: "audit-export",
      summary: "Export the audit log (JSON lines or CSV)",
      tags: ["Audit log"],
      security: [{ apiKey: [] }],
      parameters: [
        {
          in: "query" as const,
          name: "format",
          schema: { type: "string" as const, enum: ["jsonl", "csv"], default: "jsonl" },
        },
        ...filters,
      ],
      responses: {
        "200": {
          description:
            "Every matching entry, newest first: one JSON object per line, or CSV with a header row",
          content: {
            "application/x-ndjson": { schema: { type: "string" as const } },
            "text/csv": { schema: { type: "string" as const } },
          },
        },
        ...Object.fromEntries(Object.entries(list?.responses ?? {}).filter(([status]) => status !== "200")),
      },
    },
  };
}

interface ErrorBody {
  code: string;
  message: string;
  issues?: Array<{ message: string; path: Array<string | number> }>;
}

/** The one error model: trpc-to-openapi's body also carries tRPC's internal `data` (stack, path). */
function toErrorBody(raw: unknown, status: number): ErrorBody {
  const body = (raw ?? {}) as { code?: unknown; message?: unknown; issues?: unknown };
  const result: ErrorBody = {
    code: typeof body.code === "string" ? body.code : status >= 500 ? "INTERNAL_SERVER_ERROR" : "BAD_REQUEST",
    message: typeof body.message === "string" ? body.message : "request failed",
  };
  if (Array.isArray(body.issues)) {
    result.issues = body.issues.map((issue: { message?: unknown; path?: unknown }) => ({
      message: String(issue.message ?? "invalid"),
      path: Array.isArray(issue.path) ? issue.path.map((p) => (typeof p === "number" ? p : String(p))) : [],
    }));
  }
  return result;
}

export interface RestRequestOptions {
  db: Db;
  /** NATS URL agents connect to (enrollment install command). */
  agentServerUrl?: string | null;
  mimirUrl?: string | null;
  /** The gateway's internal API (site leaf bundles, enrollment credentials). */
  gateway?: GatewayConnection | null;
  /** Keycloak's side of membership (member invite and remove). */
  identityDirectory?: IdentityDirectory | null;
}

const BEARER_TOKEN = /^Bearer\s+(\S+)$/i;
const DOCUMENT_FOR_ROUTING = "http://routing.invalid";

/** A documented path as a pattern: `/nodes/{id}` matches one non-empty segment for `{id}`. */
function pathPattern(path: string): RegExp {
  const segments = path
    .split("/")
    .map((segment) =>
      /^\{[^}]+\}$/.test(segment) ? "[^/]+" : segment.replace(/[.*+?^$()|[\]\\{}]/g, "\\$&"),
    );
  return new RegExp(`^${segments.join("/")}$`);
}

/** Documented paths with the methods each declares (the document is fixed: built once). */
let routes: Array<{ pattern: RegExp; methods: Set<string> }> | null = null;
function documentedMethods(pathname: string): Set<string> | null {
  routes ??= Object.entries(createOpenApiDocument(DOCUMENT_FOR_ROUTING).paths ?? {}).map(([path, item]) => ({
    pattern: pathPattern(path),
    methods: new Set(Object.keys(item ?? {}).map((method) => method.toUpperCase())),
  }));
  const found = routes.filter((route) => route.pattern.test(pathname));
  if (found.length === 0) return null;
  return new Set(found.flatMap((route) => [...route.methods]));
}

/**
 * Answers one REST request under /api/v1. Sessions (cookies) are deliberately not accepted here.
 * Order matters (issue 8, #7 and #11): the path must be well formed and documented with this
 * method (404 / 405), the API key is checked before a byte of the body is read (401), and the
 * body is capped (413) — so an anonymous client can make the server neither read nor hold a
 * large body, and the server answers only what the OpenAPI document describes.
 */
export async function handleRestRequest(req: Request, opts: RestRequestOptions): Promise<Response> {
  const url = new URL(req.url);
  let pathname: string;
  try {
    pathname = decodeURIComponent(url.pathname).replace(/\/$/, "");
  } catch {
    return jsonError(400, "BAD_REQUEST", "the path is not valid percent-encoded UTF-8", [
      { message: "not valid percent-encoded UTF-8", path: ["path"] },
    ]);
  }
  const operationPath = pathname.slice(REST_BASE_PATH.length) || "/";
  const methods = pathname.startsWith(REST_BASE_PATH) ? documentedMethods(operationPath) : null;
  if (!methods) return jsonError(404, "NOT_FOUND", `no operation at ${operationPath}`);
  if (!methods.has(req.method)) {
    return jsonError(
      405,
      "METHOD_NOT_SUPPORTED",
      `${req.method} is not an operation of ${operationPath}; it takes ${[...methods].join(", ")}`,
      undefined,
      { allow: [...methods].join(", ") },
    );
  }

  const authorization = req.headers.get("authorization") ?? "";
  const bearer = BEARER_TOKEN.exec(authorization.trim())?.[1];
  const key = bearer ? await authenticateApiKey(opts.db, bearer) : null;
  if (!key) {
    return jsonError(
      401,
      "UNAUTHORIZED",
      bearer ? "API key unknown, revoked or expired" : "send an API key: Authorization: Bearer efk_…",
      undefined,
      { "www-authenticate": "Bearer" },
    );
  }

  if (req.method === "GET" && operationPath === AUDIT_EXPORT_PATH) return handleAuditExport(req, opts);
  const read = await readBoundedBody(req);
  if (!read.ok) return read.response;
  const response = await createOpenApiFetchHandler({
    endpoint: REST_BASE_PATH,
    router: appRouter,
    req: withBody(req, read.body),
    createContext: () =>
      createTRPCContext({
        db: opts.db,
        session: null,
        activeOrganizationSlug: null,
        authorization: req.headers.get("authorization") ?? "",
        agentServerUrl: opts.agentServerUrl ?? null,
        mimirUrl: opts.mimirUrl ?? null,
        gateway: opts.gateway ?? null,
        identityDirectory: opts.identityDirectory ?? null,
        authenticatedKey: key,
      }),
    // Internal errors are logged with their reference by the error formatter (trpc.ts).
  });
  if (response.status < 400) return response;
  const raw = await response.json().catch(() => null);
  return Response.json(toErrorBody(raw, response.status), {
    status: response.status,
    headers: { "cache-control": "no-store" },
  });
}

export const AUDIT_EXPORT_PATH = "/audit/export";
const EXPORT_PAGE = 500;
const CSV_COLUMNS = [
  "id",
  "createdAt",
  "actorType",
  "actorId",
  "action",
  "targetType",
  "targetId",
  "before",
  "after",
] as const;

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text =
    value instanceof Date ? value.toISOString() : typeof value === "string" ? value : JSON.stringify(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * GET /api/v1/audit/export?format=jsonl|csv&<audit.list filters>: the whole filtered log, newest
 * first, streamed page by page through `audit.list` (same authorization, same filters).
 * `context`: the console's own (session) context for its download link; REST uses the API key.
 */
export async function handleAuditExport(
  req: Request,
  opts: RestRequestOptions,
  context?: ReturnType<typeof createTRPCContext>,
): Promise<Response> {
  const url = new URL(req.url);
  const format = url.searchParams.get("format") ?? "jsonl";
  if (format !== "jsonl" && format !== "csv") {
    return Response.json(
      { code: "BAD_REQUEST", message: 'format must be "jsonl" or "csv"' } satisfies ErrorBody,
      { status: 400 },
    );
  }
  const filters = Object.fromEntries(
    [...url.searchParams].filter(([key]) => !["format", "limit", "cursor"].includes(key)),
  );
  const caller = createCaller(
    context ??
      createTRPCContext({
        db: opts.db,
        session: null,
        activeOrganizationSlug: null,
        authorization: req.headers.get("authorization") ?? "",
      }),
  );
  const pageAfter = (cursor: string | undefined) =>
    caller.audit.list({ ...filters, limit: EXPORT_PAGE, ...(cursor ? { cursor } : {}) } as Parameters<
      typeof caller.audit.list
    >[0]);
  let first: Awaited<ReturnType<typeof pageAfter>>;
  try {
    // The first page is fetched before answering, so a refused or invalid request gets a proper error status.
    first = await pageAfter(undefined);
  } catch (error) {
    const trpcError =
      error instanceof TRPCError ? error : new TRPCError({ code: "INTERNAL_SERVER_ERROR", cause: error });
    const issues = trpcError.cause instanceof ZodError ? trpcError.cause.issues : undefined;
    return Response.json(
      toErrorBody(
        { code: trpcError.code, message: issues ? "Input validation failed" : trpcError.message, issues },
        getHTTPStatusCodeFromError(trpcError),
      ),
      { status: getHTTPStatusCodeFromError(trpcError) },
    );
  }
  const encoder = new TextEncoder();
  const render = (entry: (typeof first.items)[number]) =>
    format === "csv"
      ? `${CSV_COLUMNS.map((column) => csvCell(entry[column])).join(",")}\r\n`
      : `${JSON.stringify(entry)}\n`;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      if (format === "csv") controller.enqueue(encoder.encode(`${CSV_COLUMNS.join(",")}\r\n`));
      let page = first;
      for (;;) {
        controller.enqueue(encoder.encode(page.items.map(render).join("")));
        if (!page.nextCursor) break;
        page = await pageAfter(page.nextCursor);
      }
      controller.close();
    },
  });
  return new Response(body, {
    headers: {
      "content-type": format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
      "content-disposition": `attachment; filename="audit-log.${format}"`,
      "cache-control": "no-store",
    },
  });
}
