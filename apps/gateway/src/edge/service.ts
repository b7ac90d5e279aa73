import type { NatsConnection } from "@nats-io/transport-node";

/** A part of the gateway that works on the platform NATS connection (started by main.ts). */
export interface EdgeService {
  name: string;
  start(platform: NatsConnection): Promise<void>;
  /** Stops taking work and finishes what is in flight (before NATS drains). */
  stop(): Promise<void>;
}
