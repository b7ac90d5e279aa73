import pg from "pg";

/**
 * One replica at a time runs the alerting loops (reconciler, series publisher, event poster):
 * whoever holds a Postgres session advisory lock. The lock goes with the connection, so a
 * replica that dies or loses Postgres hands over at once; the others try again every tick.
 */
export class AdvisoryLeader {
  private client: pg.Client | null = null;
  private connecting: Promise<boolean> | null = null;

  constructor(
    private readonly databaseUrl: string,
    /** Arbitrary, fixed per role: two roles must not share it. */
    private readonly lockKey: number,
  ) {}

  /** True while this replica holds the lock (taking it if it is free). */
  isLeader(): Promise<boolean> {
    if (this.client) return Promise.resolve(true);
    this.connecting ??= this.tryAcquire().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async tryAcquire(): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on("error", () => {
      if (this.client === client) this.client = null;
    });
    try {
      await client.connect();
      const result = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [
        this.lockKey,
      ]);
      if (result.rows[0]?.locked) {
        client.on("end", () => {
          if (this.client === client) this.client = null;
        });
        this.client = client;
        return true;
      }
    } catch {
      // Postgres unreachable: not the leader now; the next tick tries again.
    }
    await client.end().catch(() => {});
    return false;
  }

  async release(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
