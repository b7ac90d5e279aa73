// Prisma CLI configuration: the WASM schema engine ("js") driven through a pg driver adapter, so
// generate/migrate need no downloaded engine binary and work offline.
import { defineConfig } from "prisma/config";
import { MigrateAdapterFactory } from "./prisma/migrate-adapter";
import { connectionConfigFromUrl, requireDatabaseUrl } from "./src/connection";

unrefLongTimersInThisProcess();

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  // Called only by commands that touch a database (not by `generate`).
  // allowExitOnIdle: the CLI never closes the pool, which would keep the process alive.
  adapter: async () =>
    new MigrateAdapterFactory({ ...connectionConfigFromUrl(requireDatabaseUrl()), allowExitOnIdle: true }),
});

/**
 * The WASM schema engine races its advisory-lock query against a 10 s timer that it never clears,
 * so every migrate command would linger 10 s after finishing. Unref'd timers still fire while the
 * process has other work (an open query keeps it alive); they just no longer hold it open.
 * This file is only loaded by the Prisma CLI, so application code is unaffected.
 */
function unrefLongTimersInThisProcess(): void {
  const originalSetTimeout = globalThis.setTimeout;
  const patched = (...args: Parameters<typeof setTimeout>) => {
    const timer = originalSetTimeout(...args);
    if ((args[1] ?? 0) >= 5_000) timer.unref();
    return timer;
  };
  globalThis.setTimeout = Object.assign(patched, originalSetTimeout);
}
