import { defineConfig } from "vitest/config";

/** The end-to-end tests every edge agent must pass (issue 14): run once per agent. */
const agentE2e = [
  "test/agent-e2e.integration.test.ts",
  "test/artifact-e2e.integration.test.ts",
  "test/node-commands-e2e.integration.test.ts",
  "test/node-credentials-e2e.integration.test.ts",
  "test/site-cache-e2e.integration.test.ts",
];

export default defineConfig({
  test: {
    // Integration tests start real processes and wait for real reconnects.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One file at a time: the machine's two cores are shared, and timing assertions need headroom.
    fileParallelism: false,
    // `include` is set per project only: a project's list is merged with (added to) the root's.
    projects: [
      // Everything, the agent e2e tests with the reference (TypeScript) agent.
      {
        extends: true,
        test: { name: "gateway", include: ["test/**/*.test.ts"], env: { EDGEFLEET_E2E_AGENT: "node" } },
      },
      // The agent e2e tests again with the native (Go) agent.
      {
        extends: true,
        test: { name: "native-agent", include: agentE2e, env: { EDGEFLEET_E2E_AGENT: "go" } },
      },
    ],
  },
});
