"use client";

import { ApiReferenceReact } from "@scalar/api-reference-react";
import "@scalar/api-reference-react/style.css";

export function ApiDocs() {
  return (
    <ApiReferenceReact
      configuration={{
        url: "/api/openapi.json",
        // Offline-friendly and private: no web fonts or telemetry from third-party hosts.
        withDefaultFonts: false,
        telemetry: false,
        // No hosted extras (MCP generator): this page documents the API, nothing more.
        mcp: { disabled: true },
      }}
    />
  );
}
