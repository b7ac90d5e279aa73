import pg from "pg";
import type { SqlQueryable } from "./health/postgres.js";

export interface GatewayDatabase extends SqlQueryable {
  $disconnect(): Promise<void>;
}

// TEMPORARY: a pg pool shaped like the Prisma client until @edgefleet/db exports createPrismaClient.
export function createGatewayDatabase(databaseUrl: string): GatewayDatabase {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  // An idle client losing its server must not crash the process; the next probe reports it.
  pool.on("error", () => {});
  return {
    async $queryRaw<T>(query: TemplateStringsArray, ...values: unknown[]) {
      const text = query.reduce((sql, part, index) => `${sql}$${index}${part}`);
      const result = await pool.query(text, values);
      return result.rows as T;
    },
    $disconnect: () => pool.end(),
  };
}
