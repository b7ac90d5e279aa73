import { closeSync, openSync, readSync, statSync } from "node:fs";
import pg from "pg";

/**
 * Which SQL a request runs, and its plan: Postgres logs every statement with its duration and
 * parameters while a request is repeated (log_min_duration_statement = 0 for that window only),
 * and the slowest one is run again under EXPLAIN (ANALYZE, BUFFERS) with its parameters inlined.
 * Exactly the statements the application sent, whatever built them (raw SQL or Prisma).
 */

export interface LoggedStatement {
  database: string;
  durationMs: number;
  sql: string;
  params: string[];
}

/** Prefix set during capture: time, pid, database. */
const CAPTURE_PREFIX = "%m [%p] %d ";
const LINE =
  /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \S+) \[(\d+)\] (\S*) ?(LOG|DETAIL|ERROR|STATEMENT|HINT|WARNING): {2}(.*)$/;

/** The `execute` (extended protocol) and `statement` (simple protocol) entries of a log excerpt. */
export function parseStatementLog(text: string): LoggedStatement[] {
  const entries: Array<{ database: string; kind: string; message: string }> = [];
  for (const line of text.split("\n")) {
    const match = LINE.exec(line);
    if (match) entries.push({ database: match[3] ?? "", kind: match[4] ?? "", message: match[5] ?? "" });
    else if (entries.length > 0) (entries.at(-1) as { message: string }).message += `\n${line}`;
  }
  const statements: LoggedStatement[] = [];
  for (const [i, entry] of entries.entries()) {
    if (entry.kind !== "LOG") continue;
    const match = /^duration: ([\d.]+) ms {2}(?:execute [^:]+|statement): ([\s\S]*)$/.exec(entry.message);
    if (!match) continue;
    const detail = entries[i + 1];
    const params =
      detail?.kind === "DETAIL" && detail.message.startsWith("parameters: ")
        ? parseParameters(detail.message.slice("parameters: ".length))
        : [];
    statements.push({
      database: entry.database,
      durationMs: Number(match[1]),
      sql: (match[2] ?? "").trim(),
      params,
    });
  }
  return statements;
}

/** `$1 = 'a''b', $2 = NULL` → ["'a''b'", "NULL"] (SQL literals, by position). */
export function parseParameters(text: string): string[] {
  const params: string[] = [];
  for (const match of text.matchAll(/\$(\d+) = ('(?:[^']|'')*'|NULL)/g))
    params[Number(match[1]) - 1] = match[2] as string;
  return params;
}

/** The statement with its parameters as literals (highest number first: `$12` before `$1`). */
export function inlineParameters(sql: string, params: readonly string[]): string {
  return sql.replace(/\$(\d+)(?!\d)/g, (whole, n: string) => params[Number(n) - 1] ?? whole);
}

async function withClient<T>(databaseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Statements of `database` that ran during `work` (server-wide logging, on for this window only). */
export async function captureStatements(
  databaseUrl: string,
  logFile: string,
  database: string,
  work: () => Promise<void>,
): Promise<LoggedStatement[]> {
  const from = statSync(logFile).size;
  await withClient(databaseUrl, async (client) => {
    await client.query("ALTER SYSTEM SET log_min_duration_statement = 0");
    await client.query(`ALTER SYSTEM SET log_line_prefix = '${CAPTURE_PREFIX}'`);
    await client.query("SELECT pg_reload_conf()");
  });
  await sleep(500);
  try {
    await work();
  } finally {
    await withClient(databaseUrl, async (client) => {
      await client.query("ALTER SYSTEM RESET log_min_duration_statement");
      await client.query("ALTER SYSTEM RESET log_line_prefix");
      await client.query("SELECT pg_reload_conf()");
    });
  }
  await sleep(500);
  const size = statSync(logFile).size;
  const buffer = Buffer.alloc(size - from);
  const fd = openSync(logFile, "r");
  try {
    readSync(fd, buffer, 0, buffer.length, from);
  } finally {
    closeSync(fd);
  }
  return parseStatementLog(buffer.toString("utf8")).filter(
    (statement) =>
      statement.database === database && !/^(ALTER SYSTEM|SELECT pg_reload_conf)/i.test(statement.sql),
  );
}

/** EXPLAIN (ANALYZE, BUFFERS) of a logged statement, run again with its parameters. */
export async function explainAnalyze(databaseUrl: string, statement: LoggedStatement): Promise<string> {
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query<{ "QUERY PLAN": string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${inlineParameters(statement.sql, statement.params)}`,
    );
    return rows.map((row) => row["QUERY PLAN"]).join("\n");
  });
}

/**
 * Statements grouped by text (parameters aside): calls and time per request, slowest first.
 * `requests` is how many times the request ran during the capture.
 */
export function statementProfile(
  statements: readonly LoggedStatement[],
  requests: number,
): Array<{ sql: string; callsPerRequest: number; meanMs: number; maxMs: number; slowest: LoggedStatement }> {
  const groups = new Map<string, LoggedStatement[]>();
  for (const statement of statements) {
    const list = groups.get(statement.sql) ?? [];
    list.push(statement);
    groups.set(statement.sql, list);
  }
  return [...groups.entries()]
    .map(([sql, list]) => {
      const slowest = list.reduce((a, b) => (b.durationMs > a.durationMs ? b : a));
      return {
        sql,
        callsPerRequest: list.length / Math.max(1, requests),
        meanMs: list.reduce((sum, s) => sum + s.durationMs, 0) / list.length,
        maxMs: slowest.durationMs,
        slowest,
      };
    })
    .sort((a, b) => b.meanMs * b.callsPerRequest - a.meanMs * a.callsPerRequest);
}
