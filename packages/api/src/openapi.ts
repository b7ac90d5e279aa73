/**
 * The REST API: the same tRPC procedures, exposed by trpc-to-openapi wherever a procedure has
 * `meta.openapi`, with an OpenAPI 3.1 document generated from their zod schemas. Authentication
 * is by API key only (`Authorization: Bearer efk_…`): the key's organization is the tenant.
 * Errors have one shape, `{ code, message, issues? }` (issues: zod's, for invalid input).
 */

import type { OrgHistograms } from "@edgefleet/alerts";
import type { Db } from "@edgefleet/db";
import { createOpenApiFetchHandler, generateOpenApiDocument } from "trpc-to-openapi";
import { ARTIFACT_UPLOAD_PATH, handleArtifactUpload } from "./artifact-upload";
import { authenticateApiKey } from "./domain/api-keys";
import type { FairShare } from "./fair-share";
import type { GatewayConnection } from "./gateway-client";
import { jsonError, readBoundedBody, withBody } from "./http-guards";
import type { IdentityDirectory } from "./keycloak-directory";
import { type ErrorBody, errorResponseOf, toErrorBody } from "./rest-errors";
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
  document.paths = {
    ...document.paths,
    [AUDIT_EXPORT_PATH]: auditExportOperation(document),
    [ARTIFACT_UPLOAD_DOC_PATH]: artifactUploadOperation(),
  };
  // The generator documents issues as `{ message }`; ours also say where (see toErrorBody).
  const schemas = document.components?.schemas ?? {};
  for (const schema of Object.values(schemas)) {
    const issues = (schema as { properties?: { issues?: { items?: unknown } } }).properties?.issues;
    if (issues) issues.items = issueSchema;
  }
  schemas.error = errorSchema as unknown as (typeof schemas)[string];
  // The upload answers the version, exactly as GET /apps/{appId}/versions/{id} does.
  const versionResponse = document.paths?.["/apps/{appId}/versions/{id}"]?.get?.responses?.["200"];
  const versionSchema =
    versionResponse && "content" in versionResponse
      ? versionResponse.content?.["application/json"]?.schema
      : undefined;
  if (versionSchema) schemas.appVersionArtifactUploaded = versionSchema as (typeof schemas)[string];
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

const ARTIFACT_UPLOAD_DOC_PATH = "/apps/{appId}/versions/{versionId}/artifact";

/** The upload streams bytes, which trpc-to-openapi cannot describe: documented by hand (artifact-upload.ts). */
function artifactUploadOperation() {
  const json = (description: string, schema: { $ref: string }) => ({
    description,
    content: { "application/json": { schema } },
  });
  const error = { $ref: "#/components/schemas/error" };
  const uuid = { type: "string" as const, format: "uuid" };
  return {
    put: {
      operationId: "appVersion-uploadArtifact",
      summary: "Upload a version's artifact (the raw bytes as the body)",
      description:
        'For a version created with `artifact: {source: "upload"}` whose artifact is still pending. The body is ' +
        "streamed into the organization's artifact store; past the size limit the answer is 413 and nothing is kept. " +
        "If the version declared a sha256 and the content hashes otherwise, the version fails (400, issue at `sha256`). " +
        "A cut or refused upload leaves the version pending: send it again.",
      tags: ["Apps"],
      security: [{ apiKey: [] }],
      parameters: [
        { in: "path" as const, name: "appId", required: true, schema: uuid },
        { in: "path" as const, name: "versionId", required: true, schema: uuid },
      ],
      requestBody: {
        required: true,
        content: { "application/octet-stream": { schema: { type: "string" as const, format: "binary" } } },
      },
      responses: {
        "200": json("The version, its artifact now ready (sha256, size)", {
          $ref: "#/components/schemas/appVersionArtifactUploaded",
        }),
        "400": json(
          "The content does not match the declared sha256 (the version failed), or the body was cut",
          error,
        ),
        "401": json("No or an invalid API key", error),
        "403": json("The key's role is below operator", error),
        "404": json("Not found, or not in the key's organization", error),
        "409": json("Not an upload version, or its artifact is no longer pending", error),
        "413": json("Larger than the artifact size limit; nothing was kept", error),
        default: json("Any other error (503: the artifact store is unavailable)", error),
      },
    },
  };
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

export interface RestRequestOptions {
  db: Db;
  /** NATS URL agents connect to (enrollment install command). */
  agentServerUrl?: string | null;
  /** Where nodes download the native agent (enrollment install command). */
  agentDownloadUrl?: string | null;
  mimirUrl?: string | null;
  /** The gateway's internal API (site leaf bundles, enrollment credentials). */
  gateway?: GatewayConnection | null;
  /** Keycloak's side of membership (member invite and remove). */
  identityDirectory?: IdentityDirectory | null;
  /** Rate limits and fair queuing across organizations (one instance per process). */
  fairShare?: FairShare | null;
  /** Per-organization call latencies (pushed to Mimir for the SLO page). */
  apiLatency?: OrgHistograms | null;
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
  // The artifact upload streams its body (up to the artifact size cap) through to the gateway:
  // it authenticates first and caps the body itself (artifact-upload.ts).
  const upload = ARTIFACT_UPLOAD_PATH.exec(pathname.slice(REST_BASE_PATH.length));
  if (upload) {
    return handleArtifactUpload(
      req,
      { appId: upload[1] ?? "", versionId: upload[2] ?? "" },
      { db: opts.db, gateway: opts.gateway ?? null },
    );
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
        agentDownloadUrl: opts.agentDownloadUrl ?? null,
        mimirUrl: opts.mimirUrl ?? null,
        gateway: opts.gateway ?? null,
        identityDirectory: opts.identityDirectory ?? null,
        authenticatedKey: key,
        fairShare: opts.fairShare ?? null,
        apiLatency: opts.apiLatency ?? null,
      }),
    // Internal errors are logged with their reference by the error formatter (trpc.ts).
  });
  if (response.status < 400) return response;
  const raw = await response.json().catch(() => null);
  const retryAfter = (raw as { data?: { retryAfterSeconds?: unknown } } | null)?.data?.retryAfterSeconds;
  return Response.json(toErrorBody(raw, response.status), {
    status: response.status,
    headers: {
      "cache-control": "no-store",
      ...(typeof retryAfter === "number" ? { "retry-after": String(retryAfter) } : {}),
    },
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
  "actorName",
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
    return errorResponseOf(error);
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
