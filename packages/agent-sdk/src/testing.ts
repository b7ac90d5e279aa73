// Test support: real nats-server processes, free ports and polling, for every package whose tests
// need them. It lives here, the lowest package that needs it, because @edgefleet/nats-tenancy
// depends on the agent SDK (so the SDK's tests cannot import nats-tenancy); nats-tenancy/testing
// re-exports it and adds the operator-mode hub. Never imported by the agent itself.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function natsServerBin(): string {
  const bin = process.env.NATS_SERVER_BIN;
  if (!bin)
    throw new Error("NATS_SERVER_BIN is not set: source var/<profile>/stack.env or run ./edgefleet test");
  return bin;
}

/**
 * Asks the kernel for an unused loopback port. Another process may take it before the caller binds
 * it (the kernel also hands such ports out as outgoing connections' source ports): startNats retries
 * on a taken port for that reason.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no TCP address assigned");
  return address.port;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until the check returns a value (not undefined) or the deadline passes. */
export async function waitFor<T>(
  description: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 30_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const result = await check();
      if (result !== undefined) return result;
    } catch (error) {
      lastError = error;
    }
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`, { cause: lastError });
}

export interface NatsPorts {
  dir: string;
  port: number;
  monitorPort: number;
}

export interface RunningNats {
  dir: string;
  port: number;
  url: string;
  monitorUrl: string;
  /** SIGKILL: an outage, not a polite shutdown (no lame-duck mode to warn clients). */
  kill(): Promise<void>;
  /** Starts the server again after kill(), on the same ports and store. */
  start(): Promise<void>;
  /** SIGTERM, then start again on the same ports and store. */
  restart(): Promise<void>;
  /** SIGTERM and remove the server's directory. */
  stop(): Promise<void>;
}

class PortTakenError extends Error {}

const START_ATTEMPTS = 5;

/**
 * Starts nats-server with the config `config` renders for its ports (it may pick more ports of its
 * own with freePort) and waits until the server answers on its monitor port. Each server runs in its
 * own temp dir. Should a chosen port be taken before the server binds it, the config is rendered
 * again with fresh ports.
 */
export async function startNats(
  config: (paths: NatsPorts) => string | Promise<string>,
): Promise<RunningNats> {
  const dir = mkdtempSync(join(tmpdir(), "ef-nats-"));
  const configPath = join(dir, "server.conf");
  let child: ChildProcess | undefined;
  let ports: NatsPorts = { dir, port: 0, monitorPort: 0 };

  const launch = async () => {
    let log = "";
    let spawnError: Error | undefined;
    const running = spawn(natsServerBin(), ["-c", configPath], { stdio: ["ignore", "pipe", "pipe"] });
    child = running;
    running.once("error", (error) => {
      spawnError = error;
    });
    running.stdout?.on("data", (chunk) => (log += chunk));
    running.stderr?.on("data", (chunk) => (log += chunk));
    const outputRead = new Promise((resolve) => running.once("close", resolve));
    const deadline = Date.now() + 30_000;
    // Ready once our own server says it serves the monitor port (it could answer for some other
    // server that took the port) and /healthz agrees.
    const monitorStarted = `Starting http monitor on 127.0.0.1:${ports.monitorPort}`;
    for (;;) {
      if (Date.now() >= deadline) throw new Error(`nats-server did not become healthy: ${log}`);
      if (spawnError) throw new Error(`cannot run ${natsServerBin()}: ${spawnError.message}`);
      if (running.exitCode !== null) {
        await outputRead;
        const ErrorType = /address already in use/.test(log) ? PortTakenError : Error;
        throw new ErrorType(`nats-server exited with code ${running.exitCode}: ${log}`);
      }
      if (log.includes(monitorStarted)) {
        try {
          if ((await fetch(`http://127.0.0.1:${ports.monitorPort}/healthz`)).ok) return;
        } catch {
          // not listening yet
        }
      }
      await sleep(50);
    }
  };

  const stopChild = async (signal: NodeJS.Signals) => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill(signal);
    await exited;
  };

  for (let attempt = 1; ; attempt++) {
    ports = { dir, port: await freePort(), monitorPort: await freePort() };
    writeFileSync(configPath, await config(ports));
    try {
      await launch();
      break;
    } catch (error) {
      await stopChild("SIGKILL");
      if (!(error instanceof PortTakenError) || attempt >= START_ATTEMPTS) {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }

  return {
    dir,
    port: ports.port,
    url: `nats://127.0.0.1:${ports.port}`,
    monitorUrl: `http://127.0.0.1:${ports.monitorPort}`,
    kill: () => stopChild("SIGKILL"),
    start: async () => {
      if (child) return;
      await launch();
    },
    restart: async () => {
      await stopChild("SIGTERM");
      await launch();
    },
    stop: async () => {
      await stopChild("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A TCP relay standing in for a link (the WAN between a site's leaf node and the hub, a node's
 * uplink): `cut()` drops every connection and refuses new ones until `restore()`; `freeze()`
 * makes every connection open now silent both ways without closing it (a NAT that dropped its
 * state, a dead bearer), while new ones forward. It counts the PINGs clients send (`pings`). A
 * failing link is something no user runs on purpose, so simulating it is fair game.
 */
export class LinkCutter {
  private readonly sockets = new Set<Socket>();
  private readonly frozen = new WeakSet<Socket>();
  private isCut = false;
  /** Connections the relay accepted and forwarded. */
  opened = 0;
  /** PINGs seen from clients (split across reads they may be missed: a lower bound). */
  pings = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<LinkCutter> {
    let cutter: LinkCutter | undefined;
    const server = createServer((client) => {
      if (!cutter || cutter.isCut) {
        client.destroy();
        return;
      }
      const upstream = tcpConnect(targetPort, "127.0.0.1");
      const owner = cutter;
      owner.opened++;
      for (const socket of [client, upstream]) {
        owner.sockets.add(socket);
        socket.on("close", () => owner.sockets.delete(socket));
        socket.on("error", () => socket.destroy());
      }
      client.on("data", (chunk: Buffer) => {
        if (owner.frozen.has(client)) return;
        owner.pings += chunk.toString("latin1").split("PING\r\n").length - 1;
        upstream.write(chunk);
      });
      upstream.on("data", (chunk: Buffer) => {
        if (!owner.frozen.has(client)) client.write(chunk);
      });
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("no relay port");
    cutter = new LinkCutter(server, address.port);
    return cutter;
  }

  freeze(): void {
    for (const socket of this.sockets) this.frozen.add(socket);
  }

  cut(): void {
    this.isCut = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.isCut = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
