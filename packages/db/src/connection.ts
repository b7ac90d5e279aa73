import type { PoolConfig } from "pg";

/**
 * Turns a postgresql:// URL into discrete pg pool fields.
 *
 * Why not pass `connectionString`: the Prisma pg adapter derives the shadow database (used by
 * `migrate dev`/`diff`) by replacing `database` in its config; with only a connection string
 * that replacement is lost and the shadow database silently becomes the main one.
 */
export function connectionConfigFromUrl(databaseUrl: string): PoolConfig {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    throw new Error(
      "DATABASE_URL is not a valid URL (expected postgresql://user[:password]@host:port/database)",
    );
  }
  if (url.protocol !== "postgresql:" && url.protocol !== "postgres:") {
    throw new Error(`DATABASE_URL must use the postgresql:// scheme, got "${url.protocol}//"`);
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (!url.hostname || !url.username || !database) {
    throw new Error(
      "DATABASE_URL must name a host, a user and a database (postgresql://user@host:port/database)",
    );
  }
  const config: PoolConfig = {
    host: url.hostname,
    port: url.port ? Number(url.port) : 5432,
    user: decodeURIComponent(url.username),
    database,
  };
  if (url.password) config.password = decodeURIComponent(url.password);
  const sslmode = url.searchParams.get("sslmode");
  if (sslmode && sslmode !== "disable") config.ssl = { rejectUnauthorized: sslmode === "verify-full" };
  return config;
}

/** Reads DATABASE_URL, failing with a clear message when it is missing. */
export function requireDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  const databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    throw new Error("DATABASE_URL is not set (e.g. postgresql://edgefleet@127.0.0.1:15432/edgefleet)");
  }
  return databaseUrl;
}
