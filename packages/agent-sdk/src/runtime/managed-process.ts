import { type ChildProcess, execFile, spawn } from "node:child_process";
import { closeSync, openSync, renameSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../logger.js";
import type { InstanceState, InstanceStatus, RunSpec } from "../protocol/index.js";
import type { AppLog } from "./app-log.js";

export interface RestartBackoff {
  /** Delay before the first restart; doubles with each failure in a row. */
  minMs: number;
  maxMs: number;
  /** A process that ran this long before failing starts the doubling over. */
  stableAfterMs: number;
}

export interface ManagedProcessOptions {
  app: string;
  version: string;
  spec: RunSpec;
  /** Holds the output log; the working directory too unless `workDir` is given. */
  appDir: string;
  /** Default working directory: the unpacked artifact of this version (also EDGEFLEET_ARTIFACT_DIR). */
  workDir?: string;
  backoff: RestartBackoff;
  logger: Logger;
  onChange: () => void;
  /**
   * The app's recent output for live log sessions: given, stdout and stderr come through pipes
   * and go both to the output log file and to this ring; absent, straight to the file.
   */
  output?: AppLog;
}

const DEFAULT_STOP_GRACE_SECONDS = 10;
const DEFAULT_HEALTH_INTERVAL_SECONDS = 10;
const DEFAULT_HEALTH_TIMEOUT_SECONDS = 5;
const DEFAULT_HEALTH_FAILURE_THRESHOLD = 3;
const OUTPUT_LOG_ROTATE_BYTES = 5 * 1024 * 1024;

/**
 * One app version as a real process group: start, health checks, restart with exponential backoff
 * per the restart policy, stop (SIGTERM to the group, SIGKILL after the grace period).
 */
export class ManagedProcess {
  readonly app: string;
  readonly appDir: string;
  private state: InstanceState = "pending";
  private why: string | undefined;
  private restarts = 0;
  private started = false;
  private child: ChildProcess | undefined;
  private childExited: Promise<void> | undefined;
  private startedAt = 0;
  private failuresInARow = 0;
  private healthFailures = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  /** Why the agent itself killed the process (failed health check), reported instead of the signal. */
  private killReason: string | undefined;
  private stopping: Promise<void> | undefined;
  /** An operator stopped the process (stop, or the first half of restart): no automatic restart. */
  private held = false;
  private operatorStopping: Promise<void> | undefined;

  constructor(private readonly options: ManagedProcessOptions) {
    this.app = options.app;
    this.appDir = options.appDir;
  }

  sameAs(version: string, spec: RunSpec): boolean {
    return version === this.options.version && JSON.stringify(spec) === JSON.stringify(this.options.spec);
  }

  pid(): number | undefined {
    return this.child?.pid;
  }

  status(): InstanceStatus {
    return {
      app: this.app,
      ...(this.started ? { ver: this.options.version } : {}),
      st: this.state,
      ...(this.why !== undefined ? { why: this.why } : {}),
      rs: this.restarts,
    };
  }

  start(): void {
    if (this.stopping) return;
    const { spec } = this.options;
    const [command, ...args] = spec.command as [string, ...string[]];
    this.setState("starting", undefined);
    let output: number | undefined;
    let child: ChildProcess;
    const ring = this.options.output;
    try {
      output = openOutputLog(this.appDir);
      child = spawn(command, args, {
        cwd: spec.cwd ?? this.workDir(),
        env: this.environment(),
        // Own process group: stop and crash cleanup signal the app and everything it spawned.
        detached: true,
        stdio: ring ? ["ignore", "pipe", "pipe"] : ["ignore", output, output],
      });
    } catch (error) {
      if (output !== undefined) closeSync(output);
      this.onExit(undefined, `cannot start: ${errorMessage(error)}`);
      return;
    }
    if (ring) teeOutput(child, output, ring);
    else closeSync(output);
    this.child = child;
    this.started = true;
    this.startedAt = Date.now();
    this.childExited = new Promise((resolve) => {
      let settled = false;
      const settle = (reason: string) => {
        if (settled) return;
        settled = true;
        this.onExit(child, reason);
        resolve();
      };
      child.once("error", (error) => {
        // Only a failed spawn has no pid; other errors (a failed kill) are not an exit.
        if (child.pid === undefined) settle(`cannot start: ${error.message}`);
      });
      child.once("exit", (code, signal) => settle(describeExit(code, signal)));
    });
    child.once("spawn", () => {
      if (this.child !== child) return;
      this.options.logger.info("app process started", { app: this.app, pid: child.pid });
      if (spec.health) this.scheduleHealthCheck(child, Math.min(1_000, this.healthIntervalMs()));
      else this.setState("running", undefined);
    });
  }

  /** Stops for good: SIGTERM to the group, SIGKILL after the grace period; resolves once it exited. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      clearTimeout(this.restartTimer);
      clearTimeout(this.healthTimer);
      const child = this.child;
      if (child?.pid !== undefined && this.childExited) {
        signalGroup(child.pid, "SIGTERM");
        const graceMs = (this.options.spec.stopGraceSeconds ?? DEFAULT_STOP_GRACE_SECONDS) * 1000;
        const killTimer = setTimeout(() => signalGroup(child.pid as number, "SIGKILL"), graceMs);
        await this.childExited;
        clearTimeout(killTimer);
      }
      this.setState("stopped", undefined);
    })();
    return this.stopping;
  }

  /** Operator restart: stop the process (grace, then SIGKILL) and start it again; counts as a restart. */
  async restartNow(): Promise<void> {
    if (this.stopping) return;
    await this.holdProcess();
    if (this.stopping) return;
    this.held = false;
    this.restarts++;
    this.failuresInARow = 0;
    this.start();
  }

  /** Operator stop: the process ends and stays stopped until `resume` (the app stays desired). */
  async hold(): Promise<void> {
    if (this.stopping) return;
    await this.holdProcess();
    this.setState("stopped", "stopped by an operator");
  }

  /** Operator start: starts a held or failed process at once; a live one is left as it is. */
  resume(): void {
    if (this.stopping || this.child) return;
    clearTimeout(this.restartTimer);
    this.held = false;
    this.start();
  }

  /** Runs the health check once now: null when healthy, else why not; undefined without a check. */
  async checkHealthNow(): Promise<string | null | undefined> {
    if (!this.options.spec.health) return undefined;
    return this.runHealthCheck();
  }

  private holdProcess(): Promise<void> {
    this.operatorStopping ??= (async () => {
      this.held = true;
      clearTimeout(this.restartTimer);
      clearTimeout(this.healthTimer);
      const child = this.child;
      if (child?.pid !== undefined && this.childExited) {
        const exited = this.childExited;
        signalGroup(child.pid, "SIGTERM");
        const graceMs = (this.options.spec.stopGraceSeconds ?? DEFAULT_STOP_GRACE_SECONDS) * 1000;
        const killTimer = setTimeout(() => signalGroup(child.pid as number, "SIGKILL"), graceMs);
        await exited;
        clearTimeout(killTimer);
      }
    })().finally(() => {
      this.operatorStopping = undefined;
    });
    return this.operatorStopping;
  }

  private onExit(child: ChildProcess | undefined, exitReason: string): void {
    if (child !== undefined && this.child !== child) return;
    this.child = undefined;
    clearTimeout(this.healthTimer);
    // Leave nothing of the group behind (children the app spawned would otherwise be orphans).
    if (child?.pid !== undefined) signalGroup(child.pid, "SIGKILL");
    if (this.stopping) return;
    if (this.held) {
      this.setState("stopped", "stopped by an operator");
      return;
    }
    const reason = this.killReason ?? exitReason;
    const clean = this.killReason === undefined && exitReason === "exited with code 0";
    this.killReason = undefined;
    this.options.logger.warn("app process ended", { app: this.app, reason });
    const policy = this.options.spec.restart ?? "always";
    if (policy === "never" || (policy === "on-failure" && clean)) {
      this.setState(clean ? "stopped" : "failed", reason);
      return;
    }
    this.setState(clean ? "stopped" : "failed", reason);
    const { backoff } = this.options;
    if (this.startedAt > 0 && Date.now() - this.startedAt >= backoff.stableAfterMs) this.failuresInARow = 0;
    const delay = Math.min(backoff.maxMs, backoff.minMs * 2 ** this.failuresInARow);
    this.failuresInARow++;
    this.restartTimer = setTimeout(() => {
      this.restarts++;
      this.start();
    }, delay);
  }

  private healthIntervalMs(): number {
    return (this.options.spec.health?.intervalSeconds ?? DEFAULT_HEALTH_INTERVAL_SECONDS) * 1000;
  }

  private scheduleHealthCheck(child: ChildProcess, delayMs: number): void {
    this.healthTimer = setTimeout(async () => {
      const failure = await this.runHealthCheck();
      if (this.child !== child || this.stopping) return;
      if (failure === null) {
        this.healthFailures = 0;
        if (this.state === "starting") this.setState("running", undefined);
      } else {
        this.healthFailures++;
        const threshold = this.options.spec.health?.failureThreshold ?? DEFAULT_HEALTH_FAILURE_THRESHOLD;
        if (this.healthFailures >= threshold) {
          this.healthFailures = 0;
          this.killReason = `health check failed ${threshold} times: ${failure}`;
          if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
          return;
        }
      }
      this.scheduleHealthCheck(child, this.healthIntervalMs());
    }, delayMs);
  }

  /** null when healthy, else why not. */
  private async runHealthCheck(): Promise<string | null> {
    const health = this.options.spec.health;
    if (!health) return null;
    const timeoutMs = (health.timeoutSeconds ?? DEFAULT_HEALTH_TIMEOUT_SECONDS) * 1000;
    if (health.exec) {
      const [command, ...args] = health.exec as [string, ...string[]];
      return new Promise((resolve) => {
        execFile(
          command,
          args,
          {
            cwd: this.options.spec.cwd ?? this.workDir(),
            env: this.environment(),
            timeout: timeoutMs,
            killSignal: "SIGKILL",
          },
          (error) => resolve(error ? `exec ${command}: ${error.message.split("\n")[0]}` : null),
        );
      });
    }
    try {
      const response = await fetch(health.http as string, { signal: AbortSignal.timeout(timeoutMs) });
      await response.body?.cancel();
      return response.status < 400 ? null : `GET ${health.http}: HTTP ${response.status}`;
    } catch (error) {
      return `GET ${health.http}: ${errorMessage(error)}`;
    }
  }

  private workDir(): string {
    return this.options.workDir ?? this.appDir;
  }

  private environment(): NodeJS.ProcessEnv {
    // Apps get a small, predictable environment, not the agent's (which may hold its own settings).
    const inherited: NodeJS.ProcessEnv = {};
    for (const name of ["PATH", "HOME", "LANG", "TZ"]) {
      if (process.env[name] !== undefined) inherited[name] = process.env[name];
    }
    return {
      ...inherited,
      ...this.options.spec.env,
      EDGEFLEET_APP: this.app,
      EDGEFLEET_APP_VERSION: this.options.version,
      ...(this.options.workDir ? { EDGEFLEET_ARTIFACT_DIR: this.options.workDir } : {}),
    };
  }

  private setState(state: InstanceState, why: string | undefined): void {
    if (this.state === state && this.why === why) return;
    this.state = state;
    this.why = why;
    this.options.onChange();
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `killed by ${signal}` : `exited with code ${code ?? "unknown"}`;
}

/** stdout and stderr into the output log file and the ring; the file is closed when both end. */
function teeOutput(child: ChildProcess, fd: number, ring: AppLog): void {
  let open = 2;
  let fileOk = true;
  const onData = (chunk: Buffer) => {
    if (fileOk) {
      try {
        writeSync(fd, chunk);
      } catch {
        // A full disk must not stop the app: the ring still gets its output.
        fileOk = false;
      }
    }
    ring.write(chunk);
  };
  const onEnd = () => {
    if (--open === 0) closeSync(fd);
  };
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) {
      onEnd();
      continue;
    }
    stream.on("data", onData);
    stream.once("close", onEnd);
  }
}

function openOutputLog(appDir: string): number {
  const path = join(appDir, "output.log");
  try {
    if (statSync(path).size > OUTPUT_LOG_ROTATE_BYTES) renameSync(path, `${path}.1`);
  } catch {
    // No log yet.
  }
  return openSync(path, "a");
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}
