import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { type RunningNats, startNats } from "../../src/testing.js";

/**
 * A private no-auth nats-server with JetStream. Its EF_UP stream (createUpStream) captures the
 * agent-view subjects `ef.up.*.*.{st,mx,ack}` (and layout 1's `ef.up.*.{st,mx,ack}`) directly: without operator mode there is no account
 * mapping to the platform's `ef.t.<org>.…` names, so this stands in for the platform's stream.
 */
export function startTestNats(): Promise<RunningNats> {
  return startNats(({ dir, port, monitorPort }) =>
    [
      `listen: "127.0.0.1:${port}"`,
      `http: "127.0.0.1:${monitorPort}"`,
      `jetstream { store_dir: "${join(dir, "js")}" }`,
    ].join("\n"),
  );
}

/** A plain client connection for the test (the "platform" side). */
export function connectPlatform(server: RunningNats): Promise<NatsConnection> {
  return connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
}

export async function createUpStream(nc: NatsConnection): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({
    name: "EF_UP",
    subjects: ["ef.up.*.*.st", "ef.up.*.*.mx", "ef.up.*.*.ack", "ef.up.*.st", "ef.up.*.mx", "ef.up.*.ack"],
    duplicate_window: 10 * 60 * 1_000_000_000,
  });
}

/** Client connections the server holds now. */
export async function connectionCount(server: RunningNats): Promise<number> {
  const response = await fetch(`${server.monitorUrl}/varz`);
  return ((await response.json()) as { connections: number }).connections;
}
