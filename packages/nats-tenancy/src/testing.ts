// Test support shared by packages whose tests need real nats-server processes (hub and leaf).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serverAuthConfig, type TenancySecrets } from "./bootstrap";

// Each server runs in its own temp dir, removed on stop.

export function natsServerBin(): string {
  const bin = process.env.NATS_SERVER_BIN;
  if (!bin) throw new Error("NATS_SERVER_BIN is not set: run the tests through ./edgefleet test");
  return bin;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

export interface RunningNats {
  dir: string;
  port: number;
  url: string;
  monitorUrl: string;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

/** Starts nats-server with `config(dir, port, monitorPort)` and waits for /healthz. */
export async function startNats(
  config: (paths: { dir: string; port: number; monitorPort: number }) => string,
): Promise<RunningNats> {
  const dir = mkdtempSync(join(tmpdir(), "ef-nats-"));
  const port = await freePort();
  const monitorPort = await freePort();
  const configPath = join(dir, "server.conf");
  writeFileSync(configPath, config({ dir, port, monitorPort }));
  let child: ChildProcess | undefined;
  let log = "";
  const launch = async () => {
    log = "";
    child = spawn(natsServerBin(), ["-c", configPath], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout?.on("data", (chunk) => (log += chunk));
    child.stderr?.on("data", (chunk) => (log += chunk));
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`nats-server exited: ${log}`);
      try {
        const response = await fetch(`http://127.0.0.1:${monitorPort}/healthz`);
        if (response.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`nats-server did not become healthy: ${log}`);
  };
  const stopChild = async () => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGTERM");
    await exited;
  };
  await launch();
  return {
    dir,
    port,
    url: `nats://127.0.0.1:${port}`,
    monitorUrl: `http://127.0.0.1:${monitorPort}`,
    restart: async () => {
      await stopChild();
      await launch();
    },
    stop: async () => {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A hub as the stack runs it: operator mode, JetStream domain "hub", a leafnode listener. */
export async function startOperatorModeHub(
  secrets: TenancySecrets,
): Promise<RunningNats & { leafUrl: string }> {
  const leafPort = await freePort();
  const hub = await startNats(
    ({ dir, port, monitorPort }) => `
listen: 127.0.0.1:${port}
http: 127.0.0.1:${monitorPort}
jetstream { domain: hub, store_dir: ${JSON.stringify(join(dir, "js"))} }
# no_advertise: leaf nodes must reconnect through the URL they were given (a test may put a
# cuttable link there), not to addresses the hub advertises.
leafnodes { listen: 127.0.0.1:${leafPort}, isolate_leafnode_interest: true, no_advertise: true }
${serverAuthConfig(secrets, join(dir, "jwt"))}`,
  );
  return Object.assign(hub, { leafUrl: `nats-leaf://127.0.0.1:${leafPort}` });
}
