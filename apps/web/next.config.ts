import type { NextConfig } from "next";

const config: NextConfig = {
  // Workspace packages export TypeScript source (no build step of their own).
  transpilePackages: [
    "@edgefleet/api",
    "@edgefleet/alerts",
    "@edgefleet/db",
    "@edgefleet/selectors",
    "@edgefleet/agent-sdk",
    "@edgefleet/rollout",
    "@edgefleet/rollout-store",
  ],
  // The pg driver is loaded by Node at run time instead of being bundled (optional native parts).
  serverExternalPackages: ["pg", "@prisma/adapter-pg"],
};

export default config;
