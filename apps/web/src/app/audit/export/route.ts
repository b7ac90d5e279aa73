import { handleAuditExport } from "@edgefleet/api";
import { createRequestContext } from "~/server/api-context";
import { db } from "~/server/db";

// The audit page's download link: the same export as GET /api/v1/audit/export (same procedure,
// filters and role check), authenticated by the signed-in session and active organization
// instead of an API key. A GET that only reads: a cross-site page cannot read the response.
export const dynamic = "force-dynamic";

export async function GET(req: Request) {
  return handleAuditExport(req, { db }, await createRequestContext());
}
