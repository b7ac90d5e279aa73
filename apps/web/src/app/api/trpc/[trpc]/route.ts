import { appRouter, readBoundedBody, refuseCrossSiteMutation, withBody } from "@edgefleet/api";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { env } from "~/env";
import { createRequestContext } from "~/server/api-context";

export const dynamic = "force-dynamic";

/** The console's own origins: the configured one, and the one this request was addressed to. */
function consoleOrigins(req: Request): string[] {
  const origins = [new URL(env.AUTH_URL).origin];
  const host = req.headers.get("host");
  if (host) {
    const proto = req.headers.get("x-forwarded-proto") ?? new URL(req.url).protocol.replace(":", "");
    origins.push(`${proto}://${host}`);
  }
  return origins;
}

async function handler(req: Request) {
  // CSRF and body size before tRPC parses anything (issue 8, #7 and #9).
  const refused = refuseCrossSiteMutation(req, consoleOrigins(req));
  if (refused) return refused;
  let request = req;
  // Queries and live subscriptions are GETs: keep the request itself (its abort signal ends an SSE stream).
  if (req.method !== "GET" && req.method !== "HEAD") {
    const read = await readBoundedBody(req);
    if (!read.ok) return read.response;
    request = withBody(req, read.body);
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req: request,
    router: appRouter,
    createContext: createRequestContext,
    // Internal errors are logged with a reference by the API's error formatter.
    responseMeta({ errors }) {
      // Rate limited (fair-share.ts): say when to try again.
      const limited = errors.find((error) => error.code === "TOO_MANY_REQUESTS");
      const retryAfter = (limited?.cause as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
      return retryAfter ? { headers: { "retry-after": String(retryAfter) } } : {};
    },
  });
}

export { handler as GET, handler as POST };
