import { EventEmitter, once } from "node:events";
import pg from "pg";
import { connectionConfigFromUrl } from "./connection";
import { FLEET_CHANGED_CHANNEL } from "./node-status-events";

/** What a live page hears: "this organization's fleet changed, refetch". No data: the page asks again. */
export interface FleetChange {
  /** When the server saw the (last coalesced) change. */
  at: Date;
}

/**
 * Per-organization "fleet changed" signals for live pages, from ONE Postgres connection per server
 * process that LISTENs on FLEET_CHANGED_CHANNEL (however many pages are open). Bursts are
 * coalesced per subscriber: at most one signal per `minIntervalMs`, the last one always delivered.
 * After the connection comes back from a loss every subscriber is signalled (it may have missed
 * changes). The connection is opened at the first subscription, not at import.
 */
export class FleetChangeFeed {
  private readonly emitter = new EventEmitter();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private static readonly BROADCAST = "*";

  constructor(
    private readonly databaseUrl: string,
    private readonly options: { minIntervalMs?: number; onError?: (error: unknown) => void } = {},
  ) {
    this.emitter.setMaxListeners(0);
  }

  /** Yields once per (coalesced) change of the organization's fleet until `signal` aborts. */
  async *changes(organizationId: string, signal: AbortSignal): AsyncGenerator<FleetChange> {
    this.ensureListening();
    const minIntervalMs = this.options.minIntervalMs ?? 1_000;
    let pending = false;
    let wake: (() => void) | null = null;
    const onChange = () => {
      pending = true;
      wake?.();
    };
    const onAbort = () => wake?.();
    this.emitter.on(organizationId, onChange);
    this.emitter.on(FleetChangeFeed.BROADCAST, onChange);
    signal.addEventListener("abort", onAbort);
    try {
      while (!signal.aborted) {
        if (!pending) await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
        if (signal.aborted) break;
        pending = false;
        yield { at: new Date() };
        // Changes during this pause fold into one signal after it.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, minIntervalMs);
          wake = () => {
            if (signal.aborted) {
              clearTimeout(timer);
              resolve();
            }
          };
        });
        wake = null;
      }
    } finally {
      this.emitter.off(organizationId, onChange);
      this.emitter.off(FleetChangeFeed.BROADCAST, onChange);
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** For tests: resolves when the LISTEN connection is up. */
  async ready(): Promise<void> {
    this.ensureListening();
    if (this.client) return;
    await once(this.emitter, "connected");
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private ensureListening(): void {
    if (this.stopped || this.client || this.connecting || this.retryTimer) return;
    this.connecting = this.connect(0).finally(() => {
      this.connecting = null;
    });
  }

  private async connect(attempt: number): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client(connectionConfigFromUrl(this.databaseUrl));
    client.on("notification", (notification) => {
      if (notification.payload) this.emitter.emit(notification.payload);
    });
    client.on("error", (error) => {
      this.options.onError?.(error);
      this.reconnectLater(0);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${FLEET_CHANGED_CHANNEL}`);
      this.client = client;
      this.emitter.emit("connected");
      if (attempt > 0) this.emitter.emit(FleetChangeFeed.BROADCAST);
    } catch (error) {
      await client.end().catch(() => undefined);
      this.options.onError?.(error);
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
      // A reconnect counts as attempt ≥ 1, so subscribers are told to refetch what they missed.
      this.connecting = this.connect(Math.max(1, attempt)).finally(() => {
        this.connecting = null;
      });
    }, delay);
  }
}
