import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { constants } from "node:fs";
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitFor } from "./free-port.js";

const DEFAULT_NATS_SERVER_BIN = "/root/.cache/edgefleet/nats-server/v2.15.2/nats-server";

/**
 * A nats-server of the test's own (JetStream in domain "hub", like the real hub) that the test
 * may kill and restart without disturbing the shared stack. Restarts reuse port and store dir.
 */
export class PrivateNatsServer {
  private process: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly bin: string,
  ) {}

  static async create(): Promise<PrivateNatsServer> {
    const dir = await mkdtemp(join(tmpdir(), "edgefleet-gateway-test-nats-"));
    const port = await freePort();
    await writeFile(
      join(dir, "nats.conf"),
      `listen: "127.0.0.1:${port}"\njetstream { store_dir: "${join(dir, "js")}", domain: hub }\n`,
    );
    return new PrivateNatsServer(port, dir, process.env.NATS_SERVER_BIN ?? DEFAULT_NATS_SERVER_BIN);
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    await access(this.bin, constants.X_OK).catch((error: unknown) => {
      throw new Error(`no executable nats-server at ${this.bin} (set NATS_SERVER_BIN)`, { cause: error });
    });
    const child = spawn(this.bin, ["-c", join(this.dir, "nats.conf")], { stdio: "ignore" });
    let spawnError: Error | undefined;
    child.once("error", (error) => {
      spawnError = error;
    });
    this.process = child;
    await waitFor(`nats-server on port ${this.port}`, async () => {
      if (spawnError) throw spawnError;
      if (child.exitCode !== null) throw new Error(`nats-server exited with code ${child.exitCode}`);
      return (await canConnect(this.port)) ? true : undefined;
    });
  }

  /** SIGKILL: an outage, not a polite shutdown (no lame-duck mode to warn clients). */
  async kill(): Promise<void> {
    const child = this.process;
    this.process = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await once(child, "exit");
  }

  async destroy(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
