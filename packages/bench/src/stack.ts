import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { createConnection } from "node:net";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { killProcessGroup, stopProcessGroup } from "./process-group.js";
import { step } from "./progress.js";

/**
 * The benchmark's own stack: the `bench` profile of scripts/stack (the scale scenario's `scale`,
 * through EDGEFLEET_BENCH_PROFILE set by its pnpm script), and its own gateway process.
 */

export const REPO_ROOT = join(import.meta.dirname, "../../..");
/** `bench` unless a benchmark's `--profile` set EDGEFLEET_BENCH_PROFILE before importing this. */
export const PROFILE = process.env.EDGEFLEET_BENCH_PROFILE ?? "bench";
export const VAR_DIR = join(REPO_ROOT, "var", PROFILE);
export const LOG_DIR = join(VAR_DIR, "logs");
const PID_DIR = join(VAR_DIR, "pids");
const STACK_SCRIPTS = join(REPO_ROOT, "scripts/stack");
// The installer (pnpm install --frozen-lockfile, cached builds) is skipped unless asked for: a
// benchmark measures an installed machine, and must not fail on others' unfinished lockfile edits.
const profileEnv = { EDGEFLEET_SKIP_INSTALL: "1", ...process.env, EDGEFLEET_PROFILE: PROFILE };

export function pidOf(name: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(PID_DIR, `${name}.pid`), "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function postgresPid(): number | undefined {
  try {
    const pid = Number(readFileSync(join(VAR_DIR, "postgres/postmaster.pid"), "utf8").split("\n")[0]);
    return isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** True when a bench stack (of another run) is up: we never take over or wipe a live one. */
export function benchStackRunning(): boolean {
  return ["nats", "mimir", "keycloak"].some((name) => isAlive(pidOf(name))) || postgresPid() !== undefined;
}

/**
 * Runs a stack script in its own session (detached): a Ctrl-C to the benchmark's terminal must not
 * kill `up.sh` halfway or, worse, the `down.sh` of the cleanup. Asynchronous, so the driver still
 * reacts to signals while the stack starts.
 */
async function runStackScript(
  script: string,
  args: string[],
  logName: string,
  extraEnv: Record<string, string> = {},
): Promise<void> {
  const log = openSync(join(LOG_DIR, logName), "w");
  const child = spawn("bash", [join(STACK_SCRIPTS, script), ...args], {
    cwd: REPO_ROOT,
    env: { ...profileEnv, ...extraEnv },
    stdio: ["ignore", log, log],
    detached: true,
  });
  closeSync(log);
  const status = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => resolve(code));
  });
  if (status !== 0) {
    const tail = readFileSync(join(LOG_DIR, logName), "utf8").split("\n").slice(-25).join("\n");
    throw new Error(`${script} ${args.join(" ")} failed (log: ${join(LOG_DIR, logName)}):\n${tail}`);
  }
}

/** Fresh data each run (results never depend on a previous run), then the servers. */
export async function stackUp(options: { keycloak?: boolean } = {}): Promise<Record<string, string>> {
  for (const data of ["postgres", "nats", "mimir", "pgsock", "stack.env"]) {
    rmSync(join(VAR_DIR, data), { recursive: true, force: true });
  }
  mkdirSync(LOG_DIR, { recursive: true });
  await runStackScript(
    "up.sh",
    ["--services"],
    "bench-stack-up.log",
    options.keycloak === false ? { EDGEFLEET_SKIP_KEYCLOAK: "1" } : {},
  );
  return readStackEnv();
}

/**
 * stackUp, tried again when a port was taken: the scale and work* profiles' ports lie in Linux's
 * ephemeral range (32768–60999), so on a busy machine an outgoing connection of any process can hold
 * one for a moment ("address already in use"). up.sh stops what it started on failure, so trying
 * again is clean.
 */
export async function stackUpRetrying(attempts = 4): Promise<Record<string, string>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await stackUp({ keycloak: false });
    } catch (error) {
      const busy = error instanceof Error && /address already in use|already in use/.test(error.message);
      if (!busy || attempt >= attempts) throw error;
      step(
        `a port of the stack was taken by another process's connection; trying again (${attempt + 1}/${attempts})`,
      );
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
  }
}

export async function stackDown(): Promise<void> {
  if (!existsSync(VAR_DIR)) return;
  mkdirSync(LOG_DIR, { recursive: true });
  await runStackScript("down.sh", [], "bench-stack-down.log");
}

/**
 * Stops the hub nats-server (SIGTERM: it closes every connection at once) and starts it again with
 * the same command, environment and data: a restart with the fleet online, i.e. a reconnect storm.
 * The pid file is updated, so the stack's down.sh stops the new process.
 */
export async function restartNats(monitorUrl: string): Promise<{ stoppedAt: number; readyAt: number }> {
  const pid = pidOf("nats");
  if (!isAlive(pid)) throw new Error("the bench nats-server is not running");
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  const env = Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .filter((entry) => entry.includes("="))
      .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
  );
  const cwd = readlinkSync(`/proc/${pid}/cwd`);
  const [command, ...args] = argv;
  if (!command) throw new Error(`cannot read the command line of nats-server (pid ${pid})`);
  process.kill(-(pid as number), "SIGTERM");
  const stopDeadline = Date.now() + 30_000;
  while (isAlive(pid) && !isZombie(pid as number)) {
    if (Date.now() > stopDeadline) process.kill(-(pid as number), "SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const stoppedAt = Date.now();
  const log = openSync(join(LOG_DIR, "nats.log"), "a");
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", log, log], detached: true });
  closeSync(log);
  child.unref();
  writeFileSync(join(PID_DIR, "nats.pid"), `${child.pid}\n`);
  const readyDeadline = Date.now() + 60_000;
  while (Date.now() < readyDeadline) {
    if (child.exitCode !== null)
      throw new Error(`nats-server exited on restart (log: ${join(LOG_DIR, "nats.log")})`);
    const ready = await fetch(`${monitorUrl}/healthz?js-enabled-only=true`, {
      signal: AbortSignal.timeout(2_000),
    })
      .then((response) => response.ok)
      .catch(() => false);
    if (ready) return { stoppedAt, readyAt: Date.now() };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("nats-server did not become healthy within 60 s of its restart");
}

function isZombie(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? false;
  } catch {
    return false;
  }
}

export function readStackEnv(): Record<string, string> {
  const parsed = parseEnv(readFileSync(join(VAR_DIR, "stack.env"), "utf8"));
  return Object.fromEntries(
    Object.entries(parsed).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

export function migrate(stackEnv: Record<string, string>): void {
  const log = openSync(join(LOG_DIR, "bench-db-migrate.log"), "w");
  try {
    const result = spawnSync("pnpm", ["--silent", "--filter", "@edgefleet/db", "db:migrate"], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...stackEnv },
      stdio: ["ignore", log, log],
    });
    if (result.status !== 0)
      throw new Error(`migrations failed (log: ${join(LOG_DIR, "bench-db-migrate.log")})`);
  } finally {
    closeSync(log);
  }
}

/** The real gateway (`tsx src/main.ts`) with the bench stack's env, default edge intervals. */
export class GatewayProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {}

  /**
   * `nodeArgs` (e.g. `--cpu-prof`, which NODE_OPTIONS refuses) run the gateway in one node process
   * with tsx as a loader instead of under the tsx CLI, so the flags reach the gateway itself.
   */
  static async start(
    stackEnv: Record<string, string>,
    extraEnv: Record<string, string>,
    nodeArgs: string[] = [],
    /** Another port and log than the profile's one gateway (a second replica); `restart`: append to the log. */
    replica: { port?: number; logName?: string; restart?: boolean } = {},
  ): Promise<GatewayProcess> {
    const port = replica.port ?? Number(stackEnv.GATEWAY_HTTP_PORT);
    const logName = replica.logName ?? "bench-gateway.log";
    // Whatever answers on the port must be our own gateway, never a leftover one.
    if (await portTaken(port))
      throw new Error(
        `port ${port} (bench gateway) is already in use: a leftover bench gateway? (ss -ltnp 'sport = :${port}')`,
      );
    const gatewayDir = join(REPO_ROOT, "apps/gateway");
    const tsxCli = createRequire(join(gatewayDir, "package.json")).resolve("tsx/cli");
    const log = openSync(join(LOG_DIR, logName), replica.restart ? "a" : "w");
    const args =
      // --cpu-prof and its kin are refused in NODE_OPTIONS: run node itself with tsx as its loader then.
      nodeArgs.length > 0 ? [...nodeArgs, "--import", "tsx", "src/main.ts"] : [tsxCli, "src/main.ts"];
    const child = spawn(process.execPath, args, {
      cwd: gatewayDir,
      env: {
        PATH: process.env.PATH ?? "",
        ...stackEnv,
        LOG_LEVEL: "info",
        ...extraEnv,
        GATEWAY_HTTP_PORT: String(port),
      },
      stdio: ["ignore", log, log],
      // Own process group: stopping it ends tsx and the node process it runs together.
      detached: true,
    });
    closeSync(log);
    const gateway = new GatewayProcess(child, `http://127.0.0.1:${port}`);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) break;
      const ready = await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(2_000) })
        .then((response) => response.ok)
        .catch(() => false);
      if (ready && child.exitCode === null) return gateway;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    gateway.kill();
    throw new Error(`the gateway did not become ready (log: ${join(LOG_DIR, logName)})`);
  }

  async metricsText(): Promise<string> {
    return (await fetch(`${this.url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  }

  /**
   * SIGTERM to the group (clean shutdown), SIGKILL after `graceMs`; returns once the port is free
   * too, so that a restart right after can listen on it (the tsx CLI may exit before its child).
   */
  async stop(graceMs = 10_000): Promise<void> {
    await stopProcessGroup(this.child, graceMs);
    await waitUntilPortFree(Number(new URL(this.url).port), graceMs + 20_000);
  }

  kill(): void {
    killProcessGroup(this.child);
  }
}

/** Waits until nothing listens on `port` (a killed gateway's socket goes with its last process). */
export async function waitUntilPortFree(port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (await portTaken(port)) {
    if (Date.now() > deadline) throw new Error(`port ${port} still in use after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Whether something listens on the port. Only a refused connection means free: a listener too
 * busy to complete the handshake in 2 s (a gateway shutting down under load) still holds it.
 */
function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port, timeout: 2_000 });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code !== "ECONNREFUSED"));
  });
}
