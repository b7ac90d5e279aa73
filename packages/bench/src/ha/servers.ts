import { spawn } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isAlive, LOG_DIR, PROFILE, pidOf, postgresPid, REPO_ROOT, VAR_DIR } from "../stack.js";

/**
 * `kill -9` of the stack's servers and their restart, as a crash and a supervisor would do them: the
 * whole process tree dies at once (no shutdown, no lame-duck), and the same command starts again at
 * once. NATS nodes, Mimir and Keycloak are started again from their own command line, environment
 * and folder (read from /proc before the kill); Postgres by the stack scripts (pg_ctl as the
 * postgres user, after its crash recovery).
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ProcessSnapshot {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
}

function snapshot(pid: number): ProcessSnapshot {
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  const env = Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .filter((entry) => entry.includes("="))
      .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
  );
  return { argv, env, cwd: readlinkSync(`/proc/${pid}/cwd`) };
}

/** Every live descendant of `pid` (children first found through /proc/<pid>/stat's parent field). */
export function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift() as number;
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

/** SIGKILL to a process and its whole tree at the same moment. */
function killTree(pid: number): void {
  for (const target of [pid, ...descendantsOf(pid)]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

async function untilDead(pids: readonly number[], timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (pids.some((pid) => isAlive(pid) && !isZombie(pid))) {
    if (Date.now() > deadline) throw new Error(`processes ${pids.join(", ")} still alive after SIGKILL`);
    await sleep(20);
  }
}

function isZombie(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? false;
  } catch {
    return false;
  }
}

/** What a crash of one stack server looks like to the benchmark. */
export interface Crash {
  killedAt: number;
  restartedAt: number;
  /** Started again; resolves when its readiness check answers (the time it did). */
  ready: Promise<number>;
}

/**
 * `kill -9` of the stack process `name` (nats, nats-2, mimir, keycloak: its pid file's process and
 * everything under it), then the same command again in its own session, its pid file updated so the
 * stack's down.sh stops the new one. `readyUrl` answering 2xx is ready.
 */
export async function crashAndRestart(name: string, readyUrl: string): Promise<Crash> {
  const pid = pidOf(name);
  if (!isAlive(pid)) throw new Error(`${name} is not running`);
  const before = snapshot(pid as number);
  const tree = [pid as number, ...descendantsOf(pid as number)];
  killTree(pid as number);
  const killedAt = Date.now();
  await untilDead(tree);
  const [command, ...args] = before.argv;
  if (!command) throw new Error(`cannot read the command line of ${name}`);
  const log = openSync(join(LOG_DIR, `${name}.log`), "a");
  const child = spawn(command, args, {
    cwd: before.cwd,
    env: before.env,
    stdio: ["ignore", log, log],
    detached: true,
  });
  closeSync(log);
  child.unref();
  writeFileSync(join(VAR_DIR, "pids", `${name}.pid`), `${child.pid}\n`);
  const restartedAt = Date.now();
  return { killedAt, restartedAt, ready: untilReady(readyUrl, () => child.exitCode === null) };
}

/** `kill -9` of Postgres (the postmaster and every backend), then the stack scripts start it again. */
export async function crashAndRestartPostgres(databaseUrl: string): Promise<Crash> {
  const pid = postgresPid();
  if (!pid) throw new Error("postgres is not running");
  const tree = [pid, ...descendantsOf(pid)];
  killTree(pid);
  const killedAt = Date.now();
  await untilDead(tree);
  removeStaleLocks(pid);
  const restartedAt = Date.now();
  const started = runStackFunction("start_postgres", "postgres-restart.log");
  return {
    killedAt,
    restartedAt,
    ready: started.then(() => untilPostgresAnswers(databaseUrl)),
  };
}

/**
 * The killed postmaster is a zombie until its parent reaps it, and its parent is the machine's init
 * (pg_ctl started it and exited), which on these machines does not reap promptly: `pg_ctl status`
 * and Postgres's own lock-file check still see its pid alive and refuse to start. A supervisor that
 * reaps (systemd) would have cleared it; so the benchmark removes the dead server's lock files (the
 * data folder's postmaster.pid and the socket's lock), only when they name that dead pid.
 */
function removeStaleLocks(deadPid: number): void {
  for (const file of [join(VAR_DIR, "postgres", "postmaster.pid"), ...socketLocks()]) {
    try {
      if (Number(readFileSync(file, "utf8").split("\n")[0]) === deadPid) rmSync(file);
    } catch {
      // not there
    }
  }
}

function socketLocks(): string[] {
  try {
    const dir = join(VAR_DIR, "pgsock");
    return readdirSync(dir)
      .filter((name) => name.endsWith(".lock"))
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}

/** One start function of scripts/stack/services.sh for this profile (it starts only what is down). */
function runStackFunction(fn: string, logName: string): Promise<void> {
  const script = [
    "source scripts/stack/lib.sh",
    "source scripts/stack/profile.sh",
    "source scripts/stack/process.sh",
    "source scripts/stack/services.sh",
    fn,
  ].join(" && ");
  const log = openSync(join(LOG_DIR, logName), "a");
  const child = spawn("bash", ["-c", script], {
    cwd: REPO_ROOT,
    env: { ...process.env, EDGEFLEET_PROFILE: PROFILE },
    stdio: ["ignore", log, log],
    detached: true,
  });
  closeSync(log);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${fn} failed (log: ${join(LOG_DIR, logName)})`)),
    );
  });
}

async function untilReady(url: string, running: () => boolean, timeoutMs = 300_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!running()) throw new Error(`the restarted server exited (ready check ${url})`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) })
      .then((response) => response.ok)
      .catch(() => false);
    if (ok) return Date.now();
    await sleep(100);
  }
  throw new Error(`${url} not ready ${timeoutMs / 1000} s after the restart`);
}

async function untilPostgresAnswers(databaseUrl: string, timeoutMs = 120_000): Promise<number> {
  const { default: pg } = await import("pg");
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2_000 });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.query("SELECT 1");
      return Date.now();
    } catch {
      await sleep(100);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  throw new Error("Postgres did not answer after its restart");
}
