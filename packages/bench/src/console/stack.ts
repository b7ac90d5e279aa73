import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { killProcessGroup, stopProcessGroup } from "../process-group.js";
import { REPO_ROOT } from "../stack.js";
import { timedRequest } from "./http.js";

/**
 * The console benchmark's own stack: the `load` profile of scripts/stack (ports +3000, data in
 * var/load, wiped at each start), and the console built for production from a snapshot of the
 * commit under test (git archive <commit> → ~/.cache/edgefleet/load-app/<build>): `next build` never runs in apps/web,
 * where others' `next dev` serves, and the numbers belong to one commit, not to a tree mid-edit.
 */

export const PROFILE = "load";
export const VAR_DIR = join(REPO_ROOT, "var", PROFILE);
export const LOG_DIR = join(VAR_DIR, "logs");
const PID_DIR = join(VAR_DIR, "pids");
// Outside the checkout: Next.js takes the outermost lockfile it finds as the workspace root,
// and inside /work/main that would be the checkout's own, not the snapshot's.
const APPS_DIR = join(process.env.EDGEFLEET_CACHE ?? join(homedir(), ".cache/edgefleet"), "load-app");
/** Builds kept side by side (a before and an after, measured in turns); older ones are removed. */
const KEEP_BUILDS = 3;
const STACK_SCRIPTS = join(REPO_ROOT, "scripts/stack");
const profileEnv = { EDGEFLEET_SKIP_INSTALL: "1", ...process.env, EDGEFLEET_PROFILE: PROFILE };

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function pidFromFile(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8").split("\n")[0]?.trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export function pidOf(name: string): number | undefined {
  return pidFromFile(join(PID_DIR, `${name}.pid`));
}

export function postgresPid(): number | undefined {
  const pid = pidFromFile(join(VAR_DIR, "postgres/postmaster.pid"));
  return alive(pid) ? pid : undefined;
}

/** True when a load stack (of another run) is up: never take over or wipe a live one. */
export function loadStackRunning(): boolean {
  return ["nats", "mimir", "keycloak"].some((name) => alive(pidOf(name))) || postgresPid() !== undefined;
}

/** Stack scripts running in their own session (up.sh while the stack starts). */
const sessions = new Set<ChildProcess>();

/**
 * Runs a step to completion with its output in a log. Asynchronous, so the driver keeps handling
 * signals meanwhile (a driver blocked in spawnSync was killed by Ctrl-C before it could stop the
 * stack). With `ownSession`, Ctrl-C does not reach the step: the stack scripts finish, and the
 * cleanup stops them.
 */
function run(
  command: string,
  args: string[],
  logName: string,
  options: { cwd: string; env?: NodeJS.ProcessEnv; ownSession?: boolean; logDir?: string },
): Promise<void> {
  const logDir = options.logDir ?? LOG_DIR;
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, logName);
  const log = openSync(logFile, "w");
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ["ignore", log, log],
    detached: options.ownSession ?? false,
  });
  closeSync(log);
  if (options.ownSession) sessions.add(child);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      sessions.delete(child);
      if (code === 0) return resolve();
      const tail = readFileSync(logFile, "utf8").split("\n").slice(-25).join("\n");
      reject(new Error(`${command} ${args.join(" ")} failed (${signal ?? code}; log: ${logFile}):\n${tail}`));
    });
  });
}

/** Fresh data, then Postgres, NATS, Mimir and Keycloak of the load profile. */
export async function stackUp(): Promise<Record<string, string>> {
  for (const data of ["postgres", "nats", "mimir", "pgsock", "stack.env", "seed.json"]) {
    rmSync(join(VAR_DIR, data), { recursive: true, force: true });
  }
  await run("bash", [join(STACK_SCRIPTS, "up.sh"), "--services"], "load-stack-up.log", {
    cwd: REPO_ROOT,
    env: profileEnv,
    ownSession: true,
  });
  return readStackEnv();
}

export async function stackDown(): Promise<void> {
  // An up.sh still starting would go on starting servers after down.sh: end it first (its own
  // trap then stops what it had started).
  await Promise.all(
    [...sessions].map((child) => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      try {
        process.kill(-(child.pid as number), "SIGTERM");
      } catch {
        return undefined;
      }
      return Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 60_000))]);
    }),
  );
  if (!existsSync(VAR_DIR)) return;
  await run("bash", [join(STACK_SCRIPTS, "down.sh")], "load-stack-down.log", {
    cwd: REPO_ROOT,
    env: profileEnv,
    ownSession: true,
  });
}

export function readStackEnv(): Record<string, string> {
  const parsed = parseEnv(readFileSync(join(VAR_DIR, "stack.env"), "utf8"));
  return Object.fromEntries(
    Object.entries(parsed).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

export function resolveCommit(ref: string): string {
  const result = spawnSync("git", ["rev-parse", "--verify", `${ref}^{commit}`], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`not a commit: ${ref}`);
  return result.stdout.trim();
}

/** What the console build is made of at a commit (git tree ids): the same key, the same build. */
export function buildKey(commit: string): string {
  const parts = ["apps/web", "packages/api", "packages/db", "pnpm-lock.yaml", "package.json"].map(
    (path) => `${commit}:${path}`,
  );
  const result = spawnSync("git", ["rev-parse", ...parts], { cwd: REPO_ROOT, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`git rev-parse ${parts.join(" ")} failed: ${result.stderr}`);
  return result.stdout.trim().split("\n").join(" ");
}

/**
 * A build folder holds a commit's files (HEAD unless --ref), installed (pnpm --offline from the
 * store), and the console built. Reused while the console's sources are those of the build: a rebuild costs ~2 minutes.
 */
export async function prepareApp(
  stackEnv: Record<string, string>,
  ref: string,
  /** Commits whose changes are taken out of the snapshot (`git apply -R`): "before" on the same code. */
  revert: readonly string[],
  say: (text: string) => void,
  /** Where the build's logs go (another benchmark's profile; default the load profile's). */
  logDir = LOG_DIR,
): Promise<{ dir: string; commit: string; reverted: string[]; reused: boolean }> {
  const commit = resolveCommit(ref);
  const reverted = revert.map(resolveCommit);
  const key = [buildKey(commit), ...reverted.map((c) => `-${c}`)].join(" ");
  // Reused when the console's sources are unchanged since the build (commits elsewhere don't count).
  const appDir = join(APPS_DIR, createHash("sha256").update(key).digest("hex").slice(0, 12));
  const marker = join(appDir, ".build-key");
  if (existsSync(marker) && readFileSync(marker, "utf8").trim() === key) {
    return { dir: appDir, commit, reverted, reused: true };
  }
  say(`snapshot of ${commit.slice(0, 8)} (git archive) into ${appDir}`);
  pruneBuilds(KEEP_BUILDS - 1);
  rmSync(appDir, { recursive: true, force: true });
  mkdirSync(appDir, { recursive: true });
  await run("bash", ["-c", `git archive ${commit} | tar -x -C '${appDir}'`], "load-app-snapshot.log", {
    cwd: REPO_ROOT,
    logDir,
  });
  for (const c of reverted) {
    say(`taking out ${c.slice(0, 8)} (git apply -R)`);
    await run(
      "bash",
      ["-c", `git -C '${REPO_ROOT}' show --format= --binary ${c} | git apply -R`],
      `load-app-revert-${c.slice(0, 8)}.log`,
      { cwd: appDir, logDir },
    );
  }
  say("pnpm install --offline (from the store)");
  await run("pnpm", ["install", "--offline", "--frozen-lockfile"], "load-app-install.log", {
    cwd: appDir,
    env: { ...process.env, CI: "1" },
    logDir,
  });
  say("next build (~2 min on 2 cores)");
  await run(join(appDir, "apps/web/node_modules/.bin/next"), ["build"], "load-web-build.log", {
    cwd: join(appDir, "apps/web"),
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/root",
      ...stackEnv,
      NODE_ENV: "production",
    },
    logDir,
  });
  writeFileSync(marker, `${key}\n`);
  return { dir: appDir, commit, reverted, reused: false };
}

/** Removes all but the `keep` most recently built snapshots. */
function pruneBuilds(keep: number): void {
  if (!existsSync(APPS_DIR)) return;
  // Anything else here (e.g. a stray lockfile) would make Next.js take this folder as the root.
  for (const name of readdirSync(APPS_DIR).filter((name) => !/^[0-9a-f]{12}$/.test(name)))
    rmSync(join(APPS_DIR, name), { recursive: true, force: true });
  const builds = readdirSync(APPS_DIR)
    .map((name) => join(APPS_DIR, name))
    .filter((dir) => statSync(dir).isDirectory())
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  for (const dir of builds.slice(keep)) rmSync(dir, { recursive: true, force: true });
}

/** Migrations and the demo seed (organizations acme and globex, users alice and bob) from the snapshot. */
export async function migrateAndSeedDemo(
  appDir: string,
  stackEnv: Record<string, string>,
  logDir = LOG_DIR,
): Promise<void> {
  const env = { ...process.env, ...stackEnv };
  await run("pnpm", ["--silent", "--filter", "@edgefleet/db", "db:migrate"], "load-db-migrate.log", {
    cwd: appDir,
    env,
    logDir,
  });
  await run("pnpm", ["--silent", "--filter", "@edgefleet/db", "db:seed"], "load-db-seed.log", {
    cwd: appDir,
    env,
    logDir,
  });
}

/** The snapshot's console (`apps/web/server.mjs` over its build), in its own process group. */
export class WebProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {}

  /** `limits` overrides the fairness settings (the fairness scenarios restart the console with their own). */
  static async start(
    appDir: string,
    stackEnv: Record<string, string>,
    limits: Record<string, string> = {},
    /** Another port, log and public URL than the load profile's one console (a replica elsewhere). */
    replica: { port?: number; logFile?: string; restart?: boolean } = {},
  ): Promise<WebProcess> {
    const port = String(replica.port ?? stackEnv.WEB_PORT ?? "6000");
    const logFile = replica.logFile ?? join(LOG_DIR, "load-web.log");
    const log = openSync(logFile, replica.restart ? "a" : "w");
    const child = spawn(process.execPath, ["server.mjs", "-H", "127.0.0.1", "-p", port], {
      cwd: join(appDir, "apps/web"),
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/root",
        // The cases measure latency at a fixed concurrency from one key: rate limits out of the way
        // (fair queuing across organizations stays on).
        EDGEFLEET_ORG_RATE: "1000000",
        EDGEFLEET_ORG_BURST: "1000000",
        EDGEFLEET_API_KEY_RATE: "1000000",
        EDGEFLEET_API_KEY_BURST: "1000000",
        ...limits,
        ...stackEnv,
        ...(replica.port ? { AUTH_URL: `http://127.0.0.1:${port}` } : {}),
        NODE_ENV: "production",
      },
      stdio: ["ignore", log, log],
      detached: true,
    });
    closeSync(log);
    const web = new WebProcess(child, `http://127.0.0.1:${port}`);
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline && child.exitCode === null) {
      const up = await timedRequest(`${web.url}/api/openapi.json`, { timeoutMs: 5_000 })
        .then((response) => response.status === 200)
        .catch(() => false);
      if (up) return web;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    web.kill();
    throw new Error(`the console did not start (log: ${logFile})`);
  }

  /** SIGTERM to the group (clean shutdown), SIGKILL after `graceMs`. */
  stop(graceMs = 10_000): Promise<void> {
    return stopProcessGroup(this.child, graceMs);
  }

  kill(): void {
    killProcessGroup(this.child);
  }
}
