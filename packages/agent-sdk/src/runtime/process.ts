import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type Logger, silentLogger } from "../logger.js";
import { cpuPerMille, sampleProcess } from "../metrics/proc.js";
import type { InstanceStatus, RunSpec } from "../protocol/index.js";
import { ManagedProcess, type RestartBackoff } from "./managed-process.js";
import { type AppUsage, ChangeListeners, type Runtime } from "./runtime.js";

export interface ProcessRuntimeOptions {
  /** Each app's default working directory and output log live under `<appsDir>/<app>/`. */
  appsDir: string;
  restartBackoff?: Partial<RestartBackoff>;
  logger?: Logger;
}

const DEFAULT_BACKOFF: RestartBackoff = { minMs: 1_000, maxMs: 60_000, stableAfterMs: 60_000 };

/** Runs each desired app as a real child process group, supervised by a ManagedProcess. */
export class ProcessRuntime implements Runtime {
  private readonly apps = new Map<string, ManagedProcess>();
  /** Apps being stopped for good: still reported until their processes are gone. */
  private readonly removing = new Map<string, ManagedProcess>();
  private readonly listeners = new ChangeListeners();
  private readonly backoff: RestartBackoff;
  private readonly logger: Logger;
  private lastUsage = new Map<number, { cpuSeconds: number; at: number }>();
  private shuttingDown = false;

  constructor(private readonly options: ProcessRuntimeOptions) {
    this.backoff = { ...DEFAULT_BACKOFF, ...options.restartBackoff };
    this.logger = options.logger ?? silentLogger;
  }

  put(app: string, version: string, spec: RunSpec): void {
    if (this.shuttingDown) return;
    const current = this.apps.get(app);
    if (current?.sameAs(version, spec)) return;
    const next = new ManagedProcess({
      app,
      version,
      spec,
      appDir: join(this.options.appsDir, safeDirName(app)),
      backoff: this.backoff,
      logger: this.logger,
      onChange: () => this.listeners.emit(),
    });
    this.apps.set(app, next);
    // The new version starts only once the old one has exited: two versions never run at once.
    const previousStopped = current ? current.stop() : Promise.resolve();
    void previousStopped.then(async () => {
      await mkdir(next.appDir, { recursive: true });
      if (this.apps.get(app) === next && !this.shuttingDown) next.start();
    });
    this.listeners.emit();
  }

  remove(app: string): void {
    const current = this.apps.get(app);
    if (!current) return;
    this.apps.delete(app);
    this.removing.set(app, current);
    void current.stop().then(() => {
      if (this.removing.get(app) === current) this.removing.delete(app);
      this.listeners.emit();
    });
  }

  instances(): InstanceStatus[] {
    const all = new Map<string, InstanceStatus>();
    for (const [app, managed] of this.removing) all.set(app, managed.status());
    for (const [app, managed] of this.apps) all.set(app, managed.status());
    return [...all.values()].sort((a, b) => (a.app < b.app ? -1 : a.app > b.app ? 1 : 0));
  }

  onChange(listener: () => void): () => void {
    return this.listeners.add(listener);
  }

  /** CPU and RSS of each running app's main process, CPU measured since the previous call. */
  async sampleUsage(): Promise<AppUsage[]> {
    const usage: AppUsage[] = [];
    const seen = new Map<number, { cpuSeconds: number; at: number }>();
    for (const [app, managed] of this.apps) {
      const pid = managed.pid();
      if (pid === undefined) continue;
      const sample = await sampleProcess(pid);
      if (!sample) continue;
      const now = Date.now();
      const before = this.lastUsage.get(pid);
      seen.set(pid, { cpuSeconds: sample.cpuSeconds, at: now });
      usage.push({
        app,
        cpu: before ? cpuPerMille(before.cpuSeconds, sample.cpuSeconds, now - before.at) : 0,
        mem: sample.rssBytes,
      });
    }
    this.lastUsage = seen;
    return usage;
  }

  /** Stops every app (SIGTERM, then SIGKILL after its grace period) and waits for all exits. */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    await Promise.all([...this.apps.values(), ...this.removing.values()].map((managed) => managed.stop()));
    this.listeners.emit();
  }
}

/** App names come from the control plane: keep them from escaping the apps directory. */
function safeDirName(app: string): string {
  return app.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
}
