import { PrismaPg } from "@prisma/adapter-pg";
import type { PoolConfig } from "pg";
import { connectionConfigFromUrl } from "./connection";
import { PrismaClient } from "./generated/prisma/client";

/** The full, unscoped client. Application code that acts for a tenant should use `tenantDb`. */
export type Db = PrismaClient;

export interface CreatePrismaClientOptions {
  /** Extra pg pool settings (e.g. `max`, `idleTimeoutMillis`, `allowExitOnIdle`). */
  pool?: Omit<PoolConfig, "host" | "port" | "user" | "password" | "database" | "connectionString">;
  log?: Array<"query" | "info" | "warn" | "error">;
}

/**
 * Creates a Prisma client on the Rust-free query compiler, connected through the pg driver adapter.
 * Create one per process and share it; call `$disconnect()` on shutdown.
 */
export function createPrismaClient(databaseUrl: string, options: CreatePrismaClientOptions = {}): Db {
  const adapter = new PrismaPg({ ...connectionConfigFromUrl(databaseUrl), ...options.pool });
  return new PrismaClient({ adapter, log: options.log ?? ["warn", "error"] });
}
