import { appRouter } from "@edgefleet/api";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { createRequestContext } from "~/server/api-context";

export const dynamic = "force-dynamic";

function handler(req: Request) {
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: createRequestContext,
    onError({ error, path }) {
      // Client errors (bad input, not signed in, not a member) are expected; log only our failures.
      if (error.code === "INTERNAL_SERVER_ERROR") console.error(`tRPC ${path ?? "?"} failed:`, error);
    },
  });
}

export { handler as GET, handler as POST };
