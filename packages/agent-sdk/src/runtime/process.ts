import { join } from "node:path";
import type { ChunkSource } from "../artifacts/chunk-source.js";
import { type Logger, silentLogger } from "../logger.js";
import { cpuPerMille, sampleProcess } from "../metrics/proc.js";
import type { AppCommand, ArtifactRef, InstanceStatus, RunSpec } from "../protocol/index.js";
import type { AppLog } from "./app-log.js";
import { AppSlot, type AppSlotOptions } from "./app-slot.js";
import type { RestartBackoff } from "./managed-process.js";
import { type AppOperationResult, type AppUsage, ChangeListeners, type Runtime } from "./runtime.js";

export interface ProcessRuntimeOptions {
  /**
   * Each app lives under `<appsDir>/<app>/`: its output log, its versions' unpacked artifacts
   * (`versions/<sha256>/`, the default working directory of a version with an artifact), partial
   * downloads and `slot.json` (what runs, what ran before, what failed).
   */
  appsDir: string;
  restartBackoff?: Partial<RestartBackoff>;
  /** Artifact fetching (window, retries, size cap); defaults in fetchArtifact. */
  fetch?: AppSlotOptions["fetch"];
  refetch?: AppSlotOptions["refetch"];
  progressIntervalMs?: number;
  logger?: Logger;
}

const DEFAULT_BACKOFF: RestartBackoff = { minMs: 1_000, maxMs: 60_000, stableAfterMs: 60_000 };

/**
 * Runs each desired app as a real child process group (ManagedProcess), one AppSlot per app doing
 * its version switches: artifacts fetched over NATS through the agent's ChunkSource, verified,
 * unpacked, started, health-checked, reverted.
 */
export class ProcessRuntime implements Runtime {
  private readonly apps = new Map<string, AppSlot>();
  /** Apps being stopped for good: still reported until their processes are gone. */
  private readonly removing = new Map<string, { slot: AppSlot; done: Promise<void> }>();
  private readonly listeners = new ChangeListeners();
  private readonly backoff: RestartBackoff;
  private readonly logger: Logger;
  private chunkSource: ChunkSource | undefined;
  private lastUsage = new Map<number, { cpuSeconds: number; at: number }>();
  private shuttingDown = false;

  constructor(private readonly options: ProcessRuntimeOptions) {
    this.backoff = { ...DEFAULT_BACKOFF, ...options.restartBackoff };
    this.logger = options.logger ?? silentLogger;
  }

  useChunkSource(source: ChunkSource): void {
    this.chunkSource = source;
  }

  put(app: string, version: string, spec: RunSpec, artifact?: ArtifactRef): void {
    if (this.shuttingDown) return;
    let slot = this.apps.get(app);
    if (!slot) {
      const removal = this.removing.get(app)?.done;
      slot = new AppSlot({
        app,
        appDir: join(this.options.appsDir, safeDirName(app)),
        backoff: this.backoff,
        logger: this.logger,
        onChange: () => this.listeners.emit(),
        chunkSource: () => this.chunkSource,
        ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
        ...(this.options.refetch ? { refetch: this.options.refetch } : {}),
        ...(this.options.progressIntervalMs !== undefined
          ? { progressIntervalMs: this.options.progressIntervalMs }
          : {}),
        ...(removal ? { after: removal } : {}),
      });
      this.apps.set(app, slot);
    }
    slot.put({ version, spec, ...(artifact ? { art: artifact } : {}) });
  }

  remove(app: string): void {
    const slot = this.apps.get(app);
    if (!slot) return;
    this.apps.delete(app);
    const done = slot
      .remove()
      .catch((error: unknown) => this.logger.error("app removal failed", { app, error: String(error) }))
      .then(() => {
        if (this.removing.get(app)?.slot === slot) this.removing.delete(app);
        this.listeners.emit();
      });
    this.removing.set(app, { slot, done });
  }

  instances(): InstanceStatus[] {
    const all = new Map<string, InstanceStatus>();
    for (const [app, { slot }] of this.removing) all.set(app, slot.status());
    for (const [app, slot] of this.apps) all.set(app, slot.status());
    return [...all.values()].sort((a, b) => (a.app < b.app ? -1 : a.app > b.app ? 1 : 0));
  }

  operate(app: string, command: AppCommand): Promise<AppOperationResult> {
    const slot = this.apps.get(app);
    if (!slot) return Promise.resolve({ ok: false, err: "unknown_app", why: `no app ${app} on this node` });
    return slot.operate(command);
  }

  onChange(listener: () => void): () => void {
    return this.listeners.add(listener);
  }

  appLog(app: string): AppLog | undefined {
    return this.apps.get(app)?.log;
  }

  /** CPU and RSS of each running app's main process, CPU measured since the previous call. */
  async sampleUsage(): Promise<AppUsage[]> {
    const usage: AppUsage[] = [];
    const seen = new Map<number, { cpuSeconds: number; at: number }>();
    for (const [app, slot] of this.apps) {
      const pid = slot.pid();
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
    await Promise.all([
      ...[...this.apps.values()].map((slot) => slot.shutdown()),
      ...[...this.removing.values()].map(({ done }) => done),
    ]);
    this.listeners.emit();
  }
}

/** App names come from the control plane: keep them from escaping the apps directory. */
function safeDirName(app: string): string {
  return app.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
}
