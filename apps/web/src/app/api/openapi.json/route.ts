import { createOpenApiDocument } from "@edgefleet/api";

// The OpenAPI 3.1 document of the REST API, generated from the tRPC procedures' schemas.
export const dynamic = "force-dynamic";

export function GET(req: Request) {
  // The server URL in the document is this deployment's own origin.
  return Response.json(createOpenApiDocument(new URL(req.url).origin), {
    headers: { "cache-control": "public, max-age=60" },
  });
}
