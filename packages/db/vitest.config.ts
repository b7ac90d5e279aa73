import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // each file creates and migrates its own database (~2 s)
    hookTimeout: 60_000,
    testTimeout: 30_000,
  },
});
