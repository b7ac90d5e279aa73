import pg from "pg";

/**
 * Rollout facts timed inside Postgres: triggers the benchmark adds to its own database (the bench
 * profile's, never dev or test). Each row carries the writing transaction's start (`now()`) and
 * the moment of the write (`clock_timestamp()`), so a controller step's duration and every node's
 * dispatch → desired → running chain are read without polling and without touching the gateway.
 *
 * - `dispatch`: a rollout_node row got a (new) dispatch time — the core dispatched the node;
 * - `desired`: an app instance's desired version was set or changed — the commit of the dispatch;
 * - `running`: an app instance reached `running` on a version (state or version changed).
 */
const INSTRUMENTATION = `
CREATE TABLE IF NOT EXISTS bench_rollout_fact (
  kind text NOT NULL,
  node_id uuid NOT NULL,
  version_id uuid,
  batch int,
  tx_start timestamptz NOT NULL DEFAULT now(),
  at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS bench_rollout_fact_kind_at ON bench_rollout_fact (kind, at);
CREATE OR REPLACE FUNCTION bench_rollout_dispatch_fact() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.dispatched_at IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.dispatched_at IS DISTINCT FROM NEW.dispatched_at) THEN
    INSERT INTO bench_rollout_fact (kind, node_id, version_id, batch)
    VALUES ('dispatch', NEW.node_id, NEW.to_version_id, NEW.dispatch_batch);
  END IF;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION bench_rollout_instance_fact() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR OLD.desired_version_id IS DISTINCT FROM NEW.desired_version_id THEN
    INSERT INTO bench_rollout_fact (kind, node_id, version_id) VALUES ('desired', NEW.node_id, NEW.desired_version_id);
  END IF;
  IF NEW.state = 'running' AND (TG_OP = 'INSERT' OR OLD.state IS DISTINCT FROM NEW.state
      OR OLD.observed_version_id IS DISTINCT FROM NEW.observed_version_id) THEN
    INSERT INTO bench_rollout_fact (kind, node_id, version_id) VALUES ('running', NEW.node_id, NEW.observed_version_id);
  END IF;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS bench_rollout_dispatch ON rollout_node;
CREATE TRIGGER bench_rollout_dispatch AFTER INSERT OR UPDATE OF dispatched_at ON rollout_node
  FOR EACH ROW EXECUTE FUNCTION bench_rollout_dispatch_fact();
DROP TRIGGER IF EXISTS bench_rollout_instance ON app_instance;
CREATE TRIGGER bench_rollout_instance AFTER INSERT OR UPDATE OF desired_version_id, state, observed_version_id
  ON app_instance FOR EACH ROW EXECUTE FUNCTION bench_rollout_instance_fact();
`;

export interface RolloutFact {
  kind: "dispatch" | "desired" | "running";
  nid: string;
  versionId: string | null;
  batch: number | null;
  /** Start of the transaction that wrote it, ms. */
  txStart: number;
  /** When it was written, ms. */
  at: number;
}

export interface FinalInstance {
  nid: string;
  state: string;
  observedVersionId: string | null;
}

export class RolloutFacts {
  private constructor(private readonly client: pg.Pool) {}

  /**
   * A pool of one connection, so a Postgres that is killed and restarted under it (the HA benchmark)
   * fails the queries in flight, not the process: the next query connects again.
   */
  static async open(databaseUrl: string): Promise<RolloutFacts> {
    const client = new pg.Pool({ connectionString: databaseUrl, max: 1, connectionTimeoutMillis: 5_000 });
    client.on("error", () => undefined);
    await client.query(INSTRUMENTATION);
    return new RolloutFacts(client);
  }

  /** Facts written at or after `sinceMs`, oldest first. */
  async since(sinceMs: number): Promise<RolloutFact[]> {
    const result = await this.client.query<{
      kind: RolloutFact["kind"];
      node_id: string;
      version_id: string | null;
      batch: number | null;
      tx_ms: number;
      at_ms: number;
    }>(
      `SELECT kind, node_id, version_id, batch, extract(epoch FROM tx_start) * 1000 AS tx_ms,
         extract(epoch FROM at) * 1000 AS at_ms
       FROM bench_rollout_fact WHERE at >= to_timestamp($1 / 1000.0) ORDER BY at`,
      [sinceMs],
    );
    return result.rows.map((row) => ({
      kind: row.kind,
      nid: row.node_id,
      versionId: row.version_id,
      batch: row.batch,
      txStart: Number(row.tx_ms),
      at: Number(row.at_ms),
    }));
  }

  /** Nodes running `versionId` now (progress). */
  async runningCount(appId: string, versionId: string): Promise<number> {
    const result = await this.client.query<{ n: string }>(
      `SELECT count(*) AS n FROM app_instance
       WHERE app_id = $1 AND state = 'running' AND observed_version_id = $2 AND target_version_id IS NULL`,
      [appId, versionId],
    );
    return Number(result.rows[0]?.n ?? 0);
  }

  /** Every instance of the app as it stands (left-behind check at the end). */
  async instances(appId: string): Promise<FinalInstance[]> {
    const result = await this.client.query<{
      node_id: string;
      state: string;
      observed_version_id: string | null;
    }>("SELECT node_id, state::text AS state, observed_version_id FROM app_instance WHERE app_id = $1", [
      appId,
    ]);
    return result.rows.map((row) => ({
      nid: row.node_id,
      state: row.state,
      observedVersionId: row.observed_version_id,
    }));
  }

  /** The rollout's status, batches started so far and finish time. */
  async rollout(
    rolloutId: string,
  ): Promise<{ status: string; batchesStarted: number; finishedAt: number | null }> {
    const result = await this.client.query<{
      status: string;
      started: number | null;
      finished_ms: number | null;
    }>(
      `SELECT status::text AS status, jsonb_array_length(COALESCE(state->'batches', '[]'::jsonb)) AS started,
         extract(epoch FROM finished_at) * 1000 AS finished_ms FROM rollout WHERE id = $1`,
      [rolloutId],
    );
    const row = result.rows[0];
    if (!row) throw new Error(`rollout ${rolloutId} not found`);
    return {
      status: row.status,
      batchesStarted: Number(row.started ?? 0),
      finishedAt: row.finished_ms === null ? null : Number(row.finished_ms),
    };
  }

  /** The replica holding the rollout's lease (null: none). */
  async leaseOwner(rolloutId: string): Promise<string | null> {
    const result = await this.client.query<{ owner: string | null }>(
      "SELECT lease_owner AS owner FROM rollout WHERE id = $1",
      [rolloutId],
    );
    return result.rows[0]?.owner ?? null;
  }

  /** Timeline events of the rollout written at or after `sinceMs` (the first one after a kill). */
  async firstEventSince(rolloutId: string, sinceMs: number): Promise<{ kind: string; at: number } | null> {
    const result = await this.client.query<{ kind: string; at_ms: number }>(
      `SELECT kind, extract(epoch FROM at) * 1000 AS at_ms FROM rollout_event
       WHERE rollout_id = $1 AND at >= to_timestamp($2 / 1000.0) ORDER BY id LIMIT 1`,
      [rolloutId, sinceMs],
    );
    const row = result.rows[0];
    return row ? { kind: row.kind, at: Number(row.at_ms) } : null;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}
