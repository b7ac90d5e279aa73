import { handleArtifactUpload } from "@edgefleet/api";
import { env } from "~/env";
import { createRequestContext } from "~/server/api-context";
import { db } from "~/server/db";
import { gatewayConnection } from "~/server/gateway";

// The console's artifact upload: the same handler as PUT /api/v1/apps/{appId}/versions/{versionId}/artifact
// (same role check before a byte is read, same streaming to the gateway, same outcome), with the
// signed-in session and active organization instead of an API key. A cross-site page cannot send
// a PUT with our cookies without a CORS preflight we never grant; the Origin check is a second lock.
export const dynamic = "force-dynamic";

export async function PUT(
  req: Request,
  { params }: { params: Promise<{ appId: string; versionId: string }> },
) {
  const origin = req.headers.get("origin");
  if (origin !== null && origin !== new URL(env.AUTH_URL).origin) {
    return Response.json({ code: "FORBIDDEN", message: "cross-origin uploads are refused" }, { status: 403 });
  }
  const { appId, versionId } = await params;
  return handleArtifactUpload(
    req,
    { appId, versionId },
    { db, gateway: gatewayConnection() },
    await createRequestContext(),
  );
}
