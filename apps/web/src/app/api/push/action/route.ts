import {
  internalErrorMessage,
  performPushAction,
  pushActionInput,
  readBoundedBody,
  refuseCrossSiteMutation,
  reportInternalError,
} from "@edgefleet/api";
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { z } from "zod";
import { env } from "~/env";
import { db } from "~/server/db";

export const dynamic = "force-dynamic";

/**
 * POST /api/push/action { token }: a Web Push notification's button (the service worker's
 * handleNotificationAction) or the /alerts/action confirm page. The token authenticates (a
 * phone's notification has no session); domain/push-actions.ts checks it, the person's current
 * role and single use, then acts and audits.
 */
export async function POST(req: Request) {
  const refused = refuseCrossSiteMutation(req, [new URL(env.AUTH_URL).origin, new URL(req.url).origin]);
  if (refused) return refused;
  const read = await readBoundedBody(req);
  if (!read.ok) return read.response;
  let parsed: z.infer<typeof pushActionInput>;
  try {
    parsed = pushActionInput.parse(JSON.parse(new TextDecoder().decode(read.body ?? new Uint8Array())));
  } catch (error) {
    const issues =
      error instanceof z.ZodError
        ? error.issues.map((issue) => ({ message: issue.message, path: issue.path }))
        : [{ message: "not JSON", path: [] }];
    return Response.json(
      { code: "BAD_REQUEST", message: "the body must be { token }", issues },
      { status: 400 },
    );
  }
  try {
    const done = await performPushAction(
      db,
      { secret: env.EDGEFLEET_PUSH_ACTION_SECRET ?? null, mimirUrl: env.MIMIR_URL },
      parsed.token,
    );
    return Response.json(done);
  } catch (error) {
    if (error instanceof TRPCError && error.code !== "INTERNAL_SERVER_ERROR")
      return Response.json(
        { code: error.code, message: error.message },
        { status: getHTTPStatusCodeFromError(error) },
      );
    const reference = reportInternalError(error, "push.action");
    return Response.json(
      { code: "INTERNAL_SERVER_ERROR", message: internalErrorMessage(reference) },
      { status: 500 },
    );
  }
}
