import { ACCOUNT_CHANGED_CHANNEL } from "@edgefleet/db";
import pg from "pg";
import type { Logger } from "pino";

/**
 * Follows `pg_notify(ACCOUNT_CHANGED_CHANNEL, organizationId)` (sent by revokeNode) on a
 * dedicated connection, reconnecting with backoff; the gateway then re-issues the account JWT.
 */
export class AccountChangeListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly databaseUrl: string,
    private readonly onChange: (organizationId: string) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.connect(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private async connect(attempt: number): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on("notification", (notification) => {
      const organizationId = notification.payload;
      if (!organizationId) return;
      this.onChange(organizationId).catch((error: unknown) =>
        this.logger.error({ err: error, organizationId }, "could not re-issue the account after a change"),
      );
    });
    client.on("error", (error) => {
      this.logger.warn({ err: error }, "account-change listener lost Postgres; reconnecting");
      this.reconnectLater(0);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${ACCOUNT_CHANGED_CHANNEL}`);
      this.client = client;
    } catch (error) {
      await client.end().catch(() => undefined);
      this.logger.warn({ err: error, attempt }, "account-change listener cannot reach Postgres; retrying");
      this.reconnectLater(attempt + 1);
    }
  }

  private reconnectLater(attempt: number): void {
    if (this.stopped || this.retryTimer) return;
    const old = this.client;
    this.client = null;
    old?.end().catch(() => undefined);
    const delay = Math.min(10_000, 250 * 2 ** attempt);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connect(attempt);
    }, delay);
  }
}
