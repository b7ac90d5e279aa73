/** Prints the REST API's OpenAPI document, generated from packages/api (what /api/openapi.json serves). */
import { createOpenApiDocument } from "@edgefleet/api";

process.stdout.write(`${JSON.stringify(createOpenApiDocument("http://127.0.0.1:3000"), null, 2)}\n`);
