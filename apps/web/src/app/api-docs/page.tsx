import type { Metadata } from "next";
import { ApiDocs } from "./api-docs";

export const metadata: Metadata = { title: "REST API · Edgefleet" };

/** Browsable reference of the REST API, rendered from /api/openapi.json. */
export default function ApiDocsPage() {
  return <ApiDocs />;
}
