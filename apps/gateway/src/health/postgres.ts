import type { Probe } from "./probe-loop.js";

/**
 * The slice of a Prisma client the check needs; typing against it keeps this file independent
 * of the generated client and lets any Prisma client (or a test double) be passed in.
 */
export interface SqlQueryable {
  $queryRaw<T = unknown>(query: TemplateStringsArray, ...values: unknown[]): Promise<T>;
}

/** A round trip through the pool: proves the server accepts connections and runs queries. */
export function createPostgresProbe(db: SqlQueryable): Probe {
  return async () => {
    const rows = await db.$queryRaw<Array<{ ok: number }>>`SELECT 1 AS ok`;
    if (rows[0]?.ok !== 1) throw new Error(`unexpected answer to SELECT 1: ${JSON.stringify(rows)}`);
    return undefined;
  };
}
