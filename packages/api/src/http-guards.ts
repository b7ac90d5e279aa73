/**
 * What every HTTP entry point of the API checks before a procedure runs: body size, the origin of
 * a browser's mutation, and how an unexpected failure is reported. Transport-level on purpose:
 * procedures never see an oversized body, a cross-site form post, or our stack traces.
 */
import { randomUUID } from "node:crypto";

/** Largest JSON body the API reads (1 MiB): inputs are small; artifacts have their own upload path. */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

export type BodyReadResult = { ok: true; body: Uint8Array | null } | { ok: false; response: Response };

/** One error body for the HTTP guards, in the REST error model `{ code, message, issues? }`. */
export function jsonError(
  status: number,
  code: string,
  message: string,
  issues?: Array<{ message: string; path: Array<string | number> }>,
  headers: Record<string, string> = {},
): Response {
  return Response.json(issues ? { code, message, issues } : { code, message }, {
    status,
    headers: { "cache-control": "no-store", ...headers },
  });
}

function tooLarge(limit: number): Response {
  return jsonError(413, "PAYLOAD_TOO_LARGE", `the request body exceeds ${limit} bytes`, [
    { message: `at most ${limit} bytes`, path: ["body"] },
  ]);
}

/**
 * Reads the body, refusing it with 413 as soon as it passes `limit`: a declared Content-Length
 * past the limit is refused before a byte is read, and a chunked body is cut off at the limit,
 * so memory per request stays bounded whatever the client sends.
 */
export async function readBoundedBody(req: Request, limit = MAX_REQUEST_BODY_BYTES): Promise<BodyReadResult> {
  const declared = Number(req.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) return { ok: false, response: tooLarge(limit) };
  if (!req.body) return { ok: true, body: null };
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return { ok: false, response: tooLarge(limit) };
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, body };
}

/** The same request with a body already read (bounded), for handlers that read it again. */
export function withBody(req: Request, body: Uint8Array | null): Request {
  return new Request(req.url, {
    method: req.method,
    headers: req.headers,
    body: body && body.byteLength > 0 ? (body as RequestInit["body"]) : null,
  });
}

/**
 * Browser mutations must come from the console's own pages (CSRF). A cross-site page can make a
 * browser POST with the session cookie (a form, `fetch` with `mode: "no-cors"`), but it cannot
 * set a JSON content type without a CORS preflight we never grant, and the browser names its
 * origin. So: JSON only, and an Origin, when sent, must be one of ours.
 */
export function refuseCrossSiteMutation(req: Request, allowedOrigins: readonly string[]): Response | null {
  if (req.method === "GET" || req.method === "HEAD" || req.method === "OPTIONS") return null;
  const origin = req.headers.get("origin");
  if (origin !== null && !allowedOrigins.includes(origin)) {
    return jsonError(403, "FORBIDDEN", `requests from ${origin} are not accepted; use the console`);
  }
  if (req.headers.get("sec-fetch-site") === "cross-site") {
    return jsonError(403, "FORBIDDEN", "cross-site requests are not accepted; use the console");
  }
  const type = (req.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") {
    return jsonError(415, "UNSUPPORTED_MEDIA_TYPE", "mutations take application/json", [
      { message: "must be application/json", path: ["content-type"] },
    ]);
  }
  return null;
}

/**
 * Logs an unexpected failure with a fresh reference and returns the reference: the caller gets
 * "internal error, reference …" and the log has the whole error under the same reference. Raw
 * database or driver messages never reach a client.
 */
export function reportInternalError(error: unknown, where: string): string {
  const reference = randomUUID();
  const detail =
    error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { error };
  console.error(JSON.stringify({ level: "error", msg: "internal error", reference, where, ...detail }));
  return reference;
}

export function internalErrorMessage(reference: string): string {
  return `internal error; reference ${reference} (the server log has the details)`;
}
