/** The REST API's one error model, `{ code, message, issues? }`, for every handler under /api/v1. */
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { ZodError } from "zod";

export interface ErrorBody {
  code: string;
  message: string;
  issues?: Array<{ message: string; path: Array<string | number> }>;
}

/** The one error model: trpc-to-openapi's body also carries tRPC's internal `data` (stack, path). */
export function toErrorBody(raw: unknown, status: number): ErrorBody {
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

/** A procedure's error (thrown by a server-side caller) as a REST answer. */
export function errorResponseOf(error: unknown): Response {
  const trpcError =
    error instanceof TRPCError ? error : new TRPCError({ code: "INTERNAL_SERVER_ERROR", cause: error });
  const issues = trpcError.cause instanceof ZodError ? trpcError.cause.issues : undefined;
  const status = getHTTPStatusCodeFromError(trpcError);
  return Response.json(
    toErrorBody(
      { code: trpcError.code, message: issues ? "Input validation failed" : trpcError.message, issues },
      status,
    ),
    { status, headers: { "cache-control": "no-store" } },
  );
}
