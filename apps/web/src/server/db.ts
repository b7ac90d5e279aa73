import "server-only";
import { createPrismaClient, type Db } from "@edgefleet/db";
import { env } from "~/env";

// One client per server process; `next dev` re-evaluates modules on every change, so keep it on
// globalThis there to avoid opening a new connection pool per edit. It is replaced when the
// Prisma client itself was re-generated (a schema change: new `createPrismaClient` module), or
// `next dev` would keep serving a client that does not know the new models.
const globalForDb = globalThis as unknown as { edgefleetDb?: Db; edgefleetDbFactory?: unknown };

const cached = globalForDb.edgefleetDbFactory === createPrismaClient ? globalForDb.edgefleetDb : undefined;
if (!cached) void globalForDb.edgefleetDb?.$disconnect().catch(() => undefined);
export const db: Db = cached ?? createPrismaClient(env.DATABASE_URL);
if (env.NODE_ENV !== "production") {
  globalForDb.edgefleetDb = db;
  globalForDb.edgefleetDbFactory = createPrismaClient;
}
