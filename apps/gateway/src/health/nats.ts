import { readFileSync } from "node:fs";
import { type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "../logger.js";
import { describeError, type Probe } from "./probe-loop.js";

/** The hub's JetStream domain (DESIGN: leaf nodes run their own domain and address the hub by this one). */
export const HUB_JETSTREAM_DOMAIN = "hub";

// connect() must give up before the probe loop's timeout, or a late success would go unobserved.
const CONNECT_TIMEOUT_MS = 2_000;
const JETSTREAM_API_TIMEOUT_MS = 2_000;

export interface NatsHubEvents {
  /** The socket dropped: the client is reconnecting on its own. */
  onDisconnect: (reason: string) => void;
  /** The client got its connection back; JetStream should be verified again. */
  onReconnect: () => void;
}

/**
 * Owns the gateway's one connection to the NATS hub. The first connection is made by the
 * health probe (so startup waiting and retrying live in the probe loop); after that the client
 * reconnects by itself forever, and its status events are forwarded for immediate health updates.
 */
export class NatsHub {
  private connection: NatsConnection | null = null;
  private jsm: JetStreamManager | null = null;
  private disconnected = false;

  constructor(
    private readonly servers: string[],
    private readonly logger: Logger,
    private readonly events: NatsHubEvents,
    /** Platform-account credentials (a `.creds` file); none for a server without auth. */
    private readonly credsFile?: string,
  ) {}

  /** Connected and JetStream answering in the hub domain: what the gateway's features need. */
  readonly probe: Probe = async (signal) => {
    const nc = await this.ensureConnection(signal);
    if (this.disconnected) throw new Error("disconnected from NATS; client is reconnecting");
    this.jsm ??= await jetstreamManager(nc, {
      domain: HUB_JETSTREAM_DOMAIN,
      timeout: JETSTREAM_API_TIMEOUT_MS,
      checkAPI: false,
    });
    const account = await this.jsm.getAccountInfo();
    // The socket may have dropped while we awaited; "up" must not overwrite that news.
    if (this.disconnected) throw new Error("disconnected from NATS during the JetStream check");
    return { server: nc.getServer(), jetstreamDomain: account.domain, streams: account.streams };
  };

  /** The live connection for features built on top; null before the first successful connect. */
  get nc(): NatsConnection | null {
    return this.connection;
  }

  /** Flushes pending publishes and subscriptions (drain) when connected, else just closes. */
  async close(): Promise<void> {
    const nc = this.connection;
    this.connection = null;
    if (!nc || nc.isClosed()) return;
    if (this.disconnected || nc.isDraining()) {
      await nc.close();
      return;
    }
    await nc.drain();
  }

  private async ensureConnection(signal: AbortSignal): Promise<NatsConnection> {
    if (this.connection && !this.connection.isClosed()) return this.connection;
    const nc = await connect({
      servers: this.servers,
      name: "edgefleet-gateway",
      timeout: CONNECT_TIMEOUT_MS,
      // -1: never give up; a gateway without NATS is useless, and restarting it would not help.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
      // The file is read when a fresh connection is made (not on automatic reconnects).
      ...(this.credsFile ? { authenticator: credsAuthenticator(readFileSync(this.credsFile)) } : {}),
    });
    if (signal.aborted) {
      // The probe already timed out or the process is shutting down: nobody will own this.
      await nc.close();
      throw new Error("NATS connection completed after the health check gave up");
    }
    this.connection = nc;
    this.jsm = null;
    this.disconnected = false;
    this.logger.info({ server: nc.getServer() }, "connected to NATS");
    void this.watchStatus(nc);
    void nc.closed().then((error) => {
      if (this.connection === nc) {
        // Closed without our asking (e.g. authorization revoked): the next probe connects afresh.
        this.connection = null;
        this.jsm = null;
        this.events.onDisconnect(`NATS connection closed${error ? `: ${describeError(error)}` : ""}`);
      }
    });
    return nc;
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      switch (status.type) {
        case "disconnect":
          this.disconnected = true;
          this.events.onDisconnect(`disconnected from ${status.server}`);
          break;
        case "reconnect":
          this.disconnected = false;
          this.logger.info({ server: status.server }, "reconnected to NATS");
          this.events.onReconnect();
          break;
        case "error":
          this.logger.warn({ err: status.error }, "NATS async error");
          break;
        case "ldm":
          // Lame-duck mode: the server is about to shut down; the client moves to another member.
          this.logger.warn({ server: status.server }, "NATS server entered lame duck mode");
          break;
        case "staleConnection":
          this.logger.warn("NATS connection is stale (missed pings)");
          break;
        default:
          this.logger.debug({ status: status.type }, "NATS status");
      }
    }
  }
}
