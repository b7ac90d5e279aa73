import { createPrismaClient, type Db } from "@edgefleet/db";

/**
 * The gateway's one Prisma client. A connect timeout, because pg's default is to wait forever,
 * and a connection attempt stuck on a dead host would hold a pool slot long after the health
 * check gave up on it.
 */
export function createGatewayDatabase(databaseUrl: string): Db {
  // log: [] because Prisma's own logging writes plain "prisma:error …" lines to stdout, which would
  // break the JSON log stream; every caller logs its failures through pino with context instead.
  return createPrismaClient(databaseUrl, { pool: { connectionTimeoutMillis: 5_000 }, log: [] });
}
