import "server-only";
import { createPrismaClient, type Db } from "@edgefleet/db";
import { env } from "~/env";

// One client per server process; `next dev` re-evaluates modules on every change, so keep it on
// globalThis there to avoid opening a new connection pool per edit.
const globalForDb = globalThis as unknown as { edgefleetDb?: Db };

export const db: Db = globalForDb.edgefleetDb ?? createPrismaClient(env.DATABASE_URL);
if (env.NODE_ENV !== "production") globalForDb.edgefleetDb = db;
