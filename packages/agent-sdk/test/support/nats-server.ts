import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { waitFor } from "./wait.js";

const DEFAULT_NATS_SERVER_BIN = "/root/.cache/edgefleet/nats-server/v2.15.2/nats-server";

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no TCP address assigned");
  return address.port;
}

/**
 * A private no-auth nats-server with JetStream. Its EF_UP stream captures the agent-view subjects
 * `ef.up.*.{st,mx,ack}` directly: without operator mode there is no account mapping to the
 * platform's `ef.t.<org>.…` names, so this stands in for the platform's stream.
 */
export class TestNatsServer {
  private child: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    readonly monitorPort: number,
    private readonly dir: string,
  ) {}

  static async create(): Promise<TestNatsServer> {
    const dir = await mkdtemp(join(tmpdir(), "agent-sdk-nats-"));
    const server = new TestNatsServer(await freePort(), await freePort(), dir);
    await writeFile(
      join(dir, "nats.conf"),
      [
        `listen: "127.0.0.1:${server.port}"`,
        `http: "127.0.0.1:${server.monitorPort}"`,
        `jetstream { store_dir: "${join(dir, "js")}" }`,
      ].join("\n"),
    );
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const bin = process.env.NATS_SERVER_BIN ?? DEFAULT_NATS_SERVER_BIN;
    const child = spawn(bin, ["-c", join(this.dir, "nats.conf")], { stdio: "ignore" });
    let spawnError: Error | undefined;
    child.once("error", (error) => {
      spawnError = error;
    });
    this.child = child;
    await waitFor(`nats-server on port ${this.port}`, async () => {
      if (spawnError) throw new Error(`cannot run ${bin} (set NATS_SERVER_BIN): ${spawnError.message}`);
      if (child.exitCode !== null) throw new Error(`nats-server exited with code ${child.exitCode}`);
      return (await canConnect(this.port)) ? true : undefined;
    });
  }

  /** SIGKILL: an outage, not a polite shutdown. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await once(child, "exit");
  }

  async destroy(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }

  async connections(): Promise<number> {
    const response = await fetch(`http://127.0.0.1:${this.monitorPort}/varz`);
    return ((await response.json()) as { connections: number }).connections;
  }

  /** A plain client connection for the test (the "platform" side). */
  connect(): Promise<NatsConnection> {
    return connect({ servers: this.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  }

  async createUpStream(nc: NatsConnection): Promise<void> {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({
      name: "EF_UP",
      subjects: ["ef.up.*.st", "ef.up.*.mx", "ef.up.*.ack"],
      duplicate_window: 10 * 60 * 1_000_000_000,
    });
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
