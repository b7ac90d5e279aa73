import pg from "pg";

/**
 * State changes timed inside Postgres: the benchmark adds triggers to its own database (the bench
 * profile's, never dev or test) that log each node status and app instance state transition with
 * clock_timestamp(). Latencies then need no polling, and the gateway's own writes stay as they are.
 */
const INSTRUMENTATION = `
CREATE TABLE IF NOT EXISTS bench_event (
  kind text NOT NULL,
  node_id uuid NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS bench_event_kind_at ON bench_event (kind, at);
CREATE OR REPLACE FUNCTION bench_node_status_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bench_event (kind, node_id) VALUES ('node:' || NEW.status::text, NEW.id);
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION bench_app_state_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bench_event (kind, node_id) VALUES ('app:' || NEW.state::text, NEW.node_id);
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS bench_node_status ON node;
CREATE TRIGGER bench_node_status AFTER UPDATE OF status ON node FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION bench_node_status_event();
DROP TRIGGER IF EXISTS bench_app_state ON app_instance;
CREATE TRIGGER bench_app_state AFTER UPDATE OF state ON app_instance FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION bench_app_state_event();
`;

export interface NodeEvent {
  kind: string;
  nid: string;
  at: number;
}

export class PgEvents {
  private constructor(private readonly client: pg.Client) {}

  static async open(databaseUrl: string): Promise<PgEvents> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(INSTRUMENTATION);
    return new PgEvents(client);
  }

  /** Nodes (distinct) with an event of `kind` at or after `sinceMs`. */
  async countSince(kind: string, sinceMs: number): Promise<number> {
    const result = await this.client.query<{ n: string }>(
      "SELECT count(DISTINCT node_id) AS n FROM bench_event WHERE kind = $1 AND at >= to_timestamp($2 / 1000.0)",
      [kind, sinceMs],
    );
    return Number(result.rows[0]?.n ?? 0);
  }

  async eventsSince(kind: string, sinceMs: number): Promise<NodeEvent[]> {
    const result = await this.client.query<{ node_id: string; at_ms: number }>(
      `SELECT node_id, extract(epoch FROM at) * 1000 AS at_ms FROM bench_event
       WHERE kind = $1 AND at >= to_timestamp($2 / 1000.0) ORDER BY at`,
      [kind, sinceMs],
    );
    return result.rows.map((row) => ({ kind, nid: row.node_id, at: Number(row.at_ms) }));
  }

  /** Enrollment times (node row created) of an organization's nodes, ms. */
  async enrolledTimes(organizationId: string): Promise<number[]> {
    const result = await this.client.query<{ at_ms: number }>(
      "SELECT extract(epoch FROM enrolled_at) * 1000 AS at_ms FROM node WHERE organization_id = $1 ORDER BY enrolled_at",
      [organizationId],
    );
    return result.rows.map((row) => Number(row.at_ms));
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/**
 * Per node: time from its own start mark to its first event at or after that mark. Nodes without
 * such an event are returned as missing.
 */
export function latenciesFrom(
  marks: ReadonlyArray<{ nid: string; at: number }>,
  events: readonly NodeEvent[],
): { latencies: number[]; missing: string[] } {
  const byNode = new Map<string, number[]>();
  for (const event of events) {
    const list = byNode.get(event.nid) ?? [];
    list.push(event.at);
    byNode.set(event.nid, list);
  }
  const latencies: number[] = [];
  const missing: string[] = [];
  for (const mark of marks) {
    // Postgres timestamps have microseconds, Date.now() milliseconds: allow for the rounding.
    const first = (byNode.get(mark.nid) ?? []).find((at) => at >= mark.at - 1);
    if (first === undefined) missing.push(mark.nid);
    else latencies.push(Math.max(0, first - mark.at));
  }
  return { latencies, missing };
}
