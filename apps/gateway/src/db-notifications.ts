import pg from "pg";
import type { Logger } from "pino";

/**
 * Follows one Postgres notification channel on a dedicated connection, reconnecting with backoff,
 * and hands each payload on: `ACCOUNT_CHANGED_CHANNEL` (an organization id, sent by revokeNode: the
 * account JWT is re-issued), `NODE_MOVED_CHANNEL` (a node id, sent by moveNodeToSite: what is
 * cached about the node is forgotten). Every gateway replica listens.
 */
export class NotificationListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly databaseUrl: string,
    private readonly channel: string,
    private readonly onPayload: (payload: string) => Promise<void>,
    private readonly logger: Logger,
    /**
     * Called each time LISTEN is in place, the first time included: notifications sent while the
     * connection was down are lost, so a cache kept up to date by them starts over here.
     */
    private readonly onListening: () => void = () => undefined,
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
      const payload = notification.payload;
      if (!payload || notification.channel !== this.channel) return;
      this.onPayload(payload).catch((error: unknown) =>
        this.logger.error({ err: error, channel: this.channel, payload }, "handling a notification failed"),
      );
    });
    client.on("error", (error) => {
      this.logger.warn(
        { err: error, channel: this.channel },
        "notification listener lost Postgres; reconnecting",
      );
      this.reconnectLater(0);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      this.client = client;
      this.onListening();
    } catch (error) {
      await client.end().catch(() => undefined);
      this.logger.warn(
        { err: error, attempt, channel: this.channel },
        "notification listener cannot reach Postgres; retrying",
      );
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
