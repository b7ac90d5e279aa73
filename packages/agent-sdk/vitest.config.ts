import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Integration tests start real nats-servers and processes and wait for real reconnects.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One file at a time: the machine's two cores are shared, and timing assertions need headroom.
    fileParallelism: false,
  },
});
