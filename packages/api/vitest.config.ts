import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Each file creates, migrates and seeds its own database first.
    hookTimeout: 120_000,
    testTimeout: 30_000,
  },
});
