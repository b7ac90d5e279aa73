import { defineConfig } from "vitest/config";

export default defineConfig({
  // Property tests run many simulated rollouts; a busy machine must not make them time out.
  test: {
    setupFiles: ["test/setup.ts"],
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
  },
});
