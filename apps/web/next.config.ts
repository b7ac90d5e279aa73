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
  // Loaded by Node at run time instead of being bundled: the pg driver (optional native parts) and
  // the remote-write client (it names node-fetch, an optional peer we never load: we pass fetch).
  serverExternalPackages: ["pg", "@prisma/adapter-pg", "prometheus-remote-write"],
};

export default config;
