import { mkdir, readdir, readFile, rename, rm, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { type BackoffPolicy, fullJitterDelay } from "../agent/backoff.js";
import { SerialQueue } from "../agent/outbox.js";
import { ArtifactError, type ChunkSource } from "../artifacts/chunk-source.js";
import { type FetchArtifactOptions, fetchArtifact } from "../artifacts/fetcher.js";
import { exists, installArtifact } from "../artifacts/install.js";
import type { Logger } from "../logger.js";
import {
  type AppCommand,
  type ArtifactRef,
  artifactRefSchema,
  type InstanceStatus,
  type RunSpec,
  runSpecSchema,
  startWindowMs,
} from "../protocol/index.js";
import { AppLog } from "./app-log.js";
import { ManagedProcess, type RestartBackoff } from "./managed-process.js";
import type { AppOperationResult } from "./runtime.js";

/** What the desired state names for one app: a version, how to run it, and its artifact. */
export interface Release {
  version: string;
  spec: RunSpec;
  art?: ArtifactRef;
}

export interface AppSlotOptions {
  app: string;
  /** `<appsDir>/<app>`: output log, `slot.json`, `versions/<sha256>/`, `download/`. */
  appDir: string;
  backoff: RestartBackoff;
  logger: Logger;
  onChange: () => void;
  chunkSource: () => ChunkSource | undefined;
  fetch?: Pick<FetchArtifactOptions, "window" | "retry" | "maxBytes" | "maxAttempts">;
  /** Fetching again after a refusal that may pass (not uploaded yet, store down): 30 s doubling to 10 min. */
  refetch?: BackoffPolicy;
  /** Pulling progress reaches the status at most this often (default 2 s). */
  progressIntervalMs?: number;
  /** Settles before this slot touches the disk (a removal of the same app still cleaning up). */
  after?: Promise<void>;
}

const releaseSchema = z.object({
  version: z.string(),
  spec: runSpecSchema,
  art: artifactRefSchema.optional(),
});
const slotFileSchema = z.object({
  current: releaseSchema.optional(),
  previous: releaseSchema.optional(),
  failed: z.object({ release: releaseSchema, why: z.string() }).optional(),
  /** `current` was within its start window: after an agent restart it is watched again. */
  trial: z.boolean().optional(),
});
type SlotFile = z.output<typeof slotFileSchema>;

const DEFAULT_REFETCH: BackoffPolicy = { baseMs: 30_000, maxMs: 600_000 };
const MAX_REASON = 256;

export function sameRelease(a: Release, b: Release): boolean {
  return (
    a.version === b.version &&
    JSON.stringify(a.spec) === JSON.stringify(b.spec) &&
    a.art?.sha === b.art?.sha &&
    a.art?.obj === b.art?.obj
  );
}

/**
 * One app on a node and its version switches: fetch and verify the new version's artifact while
 * the current one keeps running, stop the current, start the new, watch it through its start
 * window, and go back to the previous version (kept on disk) when it fails there and the run spec
 * says `revertOnFailure`. State that must survive an agent restart (what runs, what ran before,
 * what failed) lives in `slot.json`; every change goes through one queue.
 */
export class AppSlot {
  readonly app: string;
  private desired: Release | undefined;
  private current: { release: Release; process?: ManagedProcess } | undefined;
  private previous: Release | undefined;
  private failed: { release: Release; why: string; retryable: boolean } | undefined;
  private pulling: { release: Release; done: number; total?: number } | undefined;
  private generation = 0;
  private fetchAbort: AbortController | undefined;
  private refetchTimer: NodeJS.Timeout | undefined;
  private refetches = 0;
  private probation: { cancel: () => void; check: () => void } | undefined;
  private readonly queue = new SerialQueue();
  private readonly restored: Promise<void>;
  private closed = false;
  private lastEmitted = "";
  /** The current version is still within its start window (persisted). */
  private onTrial = false;
  /** The app's recent output, across versions and restarts (live log sessions read it). */
  readonly log = new AppLog();

  constructor(private readonly options: AppSlotOptions) {
    this.app = options.app;
    this.restored = (options.after ?? Promise.resolve()).then(() => this.restore());
  }

  /** Converges on `release` (absolute: putting the same release again does nothing). */
  put(release: Release): void {
    if (this.closed || (this.desired && sameRelease(this.desired, release))) return;
    this.desired = release;
    const generation = ++this.generation;
    // A pull of another version stops; its download file stays for a later resume.
    this.fetchAbort?.abort();
    clearTimeout(this.refetchTimer);
    this.refetches = 0;
    this.emit();
    this.enqueue(generation, false);
  }

  status(): InstanceStatus {
    const base = this.current?.process?.status();
    const running = base?.ver !== undefined ? { ver: base.ver } : {};
    const rs = base?.rs ?? 0;
    if (this.pulling) {
      const { release, done, total } = this.pulling;
      return {
        app: this.app,
        ...running,
        st: "pulling",
        rs,
        tgt: release.version,
        pb: done,
        ...(total !== undefined ? { pt: total } : {}),
      };
    }
    if (this.failed) {
      return {
        app: this.app,
        ...running,
        st: "failed",
        why: clip(this.failed.why),
        rs,
        tgt: this.failed.release.version,
      };
    }
    return base ?? { app: this.app, st: "pending", rs: 0 };
  }

  pid(): number | undefined {
    return this.current?.process?.pid();
  }

  /**
   * An operator's command on the running version. Not through the switch queue: a restart must
   * not wait behind a download, and it acts on whichever process runs at the time.
   */
  async operate(command: AppCommand): Promise<AppOperationResult> {
    const process = this.current?.process;
    if (this.closed || !process) {
      return { ok: false, err: "not_running", why: `app ${this.app} has no started version on this node` };
    }
    if (command === "health") {
      const failure = await process.checkHealthNow();
      if (failure === undefined) {
        return { ok: false, err: "no_health_check", why: `app ${this.app} has no health check` };
      }
      return {
        ok: true,
        inst: this.status(),
        hl: failure === null ? { ok: true } : { ok: false, why: clip(failure) },
      };
    }
    if (command === "restart") await process.restartNow();
    else if (command === "stop") await process.hold();
    else process.resume();
    return { ok: true, inst: this.status() };
  }

  /** Stops the app, keeping its versions on disk (agent shutdown). */
  async shutdown(): Promise<void> {
    this.close();
    await this.queue.run(async () => {
      await this.current?.process?.stop();
    });
  }

  /** Stops the app for good and deletes its versions (the app was removed from the node). */
  async remove(): Promise<void> {
    this.close();
    await this.queue.run(async () => {
      await this.current?.process?.stop();
      await this.restored;
      await rm(join(this.options.appDir, "versions"), { recursive: true, force: true });
      await rm(join(this.options.appDir, "download"), { recursive: true, force: true });
      await rm(this.slotFile(), { force: true });
    });
  }

  private close(): void {
    this.closed = true;
    this.generation++;
    this.fetchAbort?.abort();
    clearTimeout(this.refetchTimer);
    this.probation?.cancel();
  }

  private enqueue(generation: number, refetch: boolean): void {
    void this.queue
      .run(() => this.converge(generation, refetch))
      .catch((error: unknown) =>
        this.options.logger.error("app version switch failed", { app: this.app, error: message(error) }),
      );
  }

  private stale(generation: number): boolean {
    return this.closed || generation !== this.generation;
  }

  private async converge(generation: number, refetch: boolean): Promise<void> {
    await this.restored;
    if (this.stale(generation) || !this.desired) return;
    const target = this.desired;
    if (this.current && sameRelease(this.current.release, target)) {
      // Already there (or back there: a rollback to the running version ends a failed switch).
      this.failed = undefined;
      this.ensureStarted(generation);
      await this.persist();
      this.emit();
      return;
    }
    // The current version keeps running while the new one downloads.
    this.ensureStarted(generation);
    if (this.failed && sameRelease(this.failed.release, target) && !(refetch && this.failed.retryable)) {
      // A version that failed here stays failed until the desired state changes.
      this.emit();
      return;
    }
    this.failed = undefined;
    let workDir: string | undefined;
    if (target.art) {
      try {
        workDir = await this.obtain(target, target.art);
      } catch (error) {
        this.pulling = undefined;
        this.fetchAbort = undefined;
        if (this.stale(generation) || (error instanceof ArtifactError && error.code === "aborted")) {
          this.emit();
          return;
        }
        const retryable = error instanceof ArtifactError ? error.retryable : true;
        const still = this.current ? `; still running ${this.current.release.version}` : "";
        this.failed = { release: target, why: `${message(error)}${still}`, retryable };
        this.options.logger.warn("new version refused", {
          app: this.app,
          version: target.version,
          reason: this.failed.why,
        });
        await this.persist();
        this.emit();
        if (retryable) this.scheduleRefetch(generation);
        return;
      }
      this.pulling = undefined;
      this.fetchAbort = undefined;
      if (this.stale(generation)) return;
    }
    await this.switchTo(target, workDir, generation);
  }

  /** Stops the current version, starts `target`, and puts it on probation for its start window. */
  private async switchTo(target: Release, workDir: string | undefined, generation: number): Promise<void> {
    const old = this.current;
    this.probation?.cancel();
    const next = this.createProcess(target, workDir);
    this.current = { release: target, process: next };
    if (old) this.previous = old.release;
    this.emit();
    // Two versions never run at once: the new one starts once the old one has exited.
    await old?.process?.stop();
    await mkdir(this.options.appDir, { recursive: true });
    this.onTrial = true;
    await this.persist();
    if (this.closed || this.current.process !== next) return;
    next.start();
    this.watchStart(next, target, old?.release, generation);
  }

  private watchStart(
    process: ManagedProcess,
    target: Release,
    fallback: Release | undefined,
    generation: number,
  ) {
    const windowMs = startWindowMs(target.spec);
    let settled = false;
    const settle = (failure: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      this.probation = undefined;
      void this.queue
        .run(() => this.settleStart(process, target, fallback, failure, windowMs, generation))
        .catch((error: unknown) =>
          this.options.logger.error("settling a version switch failed", {
            app: this.app,
            error: message(error),
          }),
        );
    };
    const timer = setTimeout(() => {
      const status = process.status();
      settle(
        status.st === "running"
          ? undefined
          : `not healthy after ${windowMs / 1000} s (${status.st}${status.why ? `: ${status.why}` : ""})`,
      );
    }, windowMs);
    this.probation = {
      cancel: () => {
        settled = true;
        clearTimeout(timer);
      },
      check: () => {
        const status = process.status();
        if (status.st === "failed") settle(status.why ?? "failed");
      },
    };
  }

  private async settleStart(
    process: ManagedProcess,
    target: Release,
    fallback: Release | undefined,
    failure: string | undefined,
    windowMs: number,
    generation: number,
  ): Promise<void> {
    if (this.current?.process !== process) return;
    this.onTrial = false;
    if (failure === undefined) {
      this.options.logger.info("new version running", { app: this.app, version: target.version });
      await this.collectGarbage();
      await this.persist();
      return;
    }
    const why = `${target.version} failed within its ${windowMs / 1000} s start window: ${failure}`;
    if (!target.spec.revertOnFailure || !fallback || this.stale(generation)) {
      // It stays, under its restart policy; its own status says how it fails.
      this.options.logger.warn("new version failing, not reverting", { app: this.app, reason: why });
      await this.persist();
      return;
    }
    this.options.logger.warn("new version failed, reverting", {
      app: this.app,
      version: target.version,
      to: fallback.version,
      reason: why,
    });
    await process.stop();
    if (this.current?.process !== process) return;
    const restored = this.createProcess(fallback, this.workDirOf(fallback));
    this.current = { release: fallback, process: restored };
    this.previous = undefined;
    this.failed = { release: target, why: `${why}; reverted to ${fallback.version}`, retryable: false };
    restored.start();
    await this.persist();
    this.emit();
  }

  /** Fetches, verifies and unpacks the artifact into `versions/<sha256>` unless it is there already. */
  private async obtain(target: Release, art: ArtifactRef): Promise<string> {
    const dir = this.workDirOf(target) as string;
    if (await exists(dir)) return dir;
    const source = this.options.chunkSource();
    if (!source) throw new ArtifactError("no_source", "no artifact source: the agent is not attached");
    const obj = art.obj ?? art.sha;
    const downloads = join(this.options.appDir, "download");
    await mkdir(downloads, { recursive: true });
    const partPath = join(downloads, `${obj}.part`);
    this.fetchAbort = new AbortController();
    const pulling: { release: Release; done: number; total?: number } = { release: target, done: 0 };
    this.pulling = pulling;
    this.emit();
    const intervalMs = this.options.progressIntervalMs ?? 2_000;
    let lastEmit = Date.now();
    await fetchArtifact({
      ...this.options.fetch,
      source,
      obj,
      sha256: art.sha,
      partPath,
      signal: this.fetchAbort.signal,
      onProgress: (done, total) => {
        pulling.done = done;
        pulling.total = total;
        if (Date.now() - lastEmit >= intervalMs || done === total) {
          lastEmit = Date.now();
          this.emit();
        }
      },
    });
    await installArtifact(partPath, dir);
    await unlink(partPath).catch(() => undefined);
    return dir;
  }

  private scheduleRefetch(generation: number): void {
    const delay = fullJitterDelay(this.refetches++, this.options.refetch ?? DEFAULT_REFETCH);
    clearTimeout(this.refetchTimer);
    this.refetchTimer = setTimeout(() => {
      if (!this.stale(generation)) this.enqueue(generation, true);
    }, delay);
    this.refetchTimer.unref();
  }

  /** Starts the current version if it is not running yet (after an agent restart). */
  private ensureStarted(generation: number): void {
    const current = this.current;
    if (!current || current.process || this.closed) return;
    const process = this.createProcess(current.release, this.workDirOf(current.release));
    current.process = process;
    process.start();
    // Restarted within its start window: watched again, so a failure still reverts.
    if (this.onTrial && this.previous) this.watchStart(process, current.release, this.previous, generation);
    else this.onTrial = false;
  }

  private createProcess(release: Release, workDir: string | undefined): ManagedProcess {
    return new ManagedProcess({
      app: this.app,
      version: release.version,
      spec: release.spec,
      appDir: this.options.appDir,
      ...(workDir ? { workDir } : {}),
      backoff: this.options.backoff,
      logger: this.options.logger,
      output: this.log,
      onChange: () => {
        this.probation?.check();
        this.emit();
      },
    });
  }

  /** Where a release's artifact is unpacked; undefined when it has none (runs in the app dir). */
  private workDirOf(release: Release): string | undefined {
    return release.art ? join(this.options.appDir, "versions", release.art.sha) : undefined;
  }

  /** Keeps the running, the previous and a failed version's files; deletes other versions and leftovers. */
  private async collectGarbage(): Promise<void> {
    const keep = new Set(
      [this.current?.release, this.previous, this.failed?.release].flatMap((release) =>
        release?.art ? [release.art.sha] : [],
      ),
    );
    const versionsDir = join(this.options.appDir, "versions");
    const entries = await readdir(versionsDir).catch(() => [] as string[]);
    for (const entry of entries) {
      if (!keep.has(entry)) await rm(join(versionsDir, entry), { recursive: true, force: true });
    }
  }

  private slotFile(): string {
    return join(this.options.appDir, "slot.json");
  }

  private async restore(): Promise<void> {
    let saved: SlotFile;
    try {
      saved = slotFileSchema.parse(JSON.parse(await readFile(this.slotFile(), "utf8")));
    } catch {
      return; // none yet, or unreadable: start from the desired state alone
    }
    const present = async (release: Release | undefined) => {
      const dir = release && this.workDirOf(release);
      return release !== undefined && (dir === undefined || (await exists(dir)));
    };
    if (saved.current && (await present(saved.current))) this.current = { release: saved.current };
    if (saved.previous && (await present(saved.previous))) this.previous = saved.previous;
    if (saved.failed) this.failed = { ...saved.failed, retryable: false };
    this.onTrial = saved.trial === true && this.current !== undefined;
  }

  private async persist(): Promise<void> {
    const saved: SlotFile = {
      ...(this.current ? { current: this.current.release } : {}),
      ...(this.previous ? { previous: this.previous } : {}),
      // Only failures that asking again would not change: a refused download is retried after a restart.
      ...(this.failed && !this.failed.retryable
        ? { failed: { release: this.failed.release, why: this.failed.why } }
        : {}),
      ...(this.onTrial ? { trial: true } : {}),
    };
    await mkdir(this.options.appDir, { recursive: true });
    const temporary = `${this.slotFile()}.tmp`;
    await writeFile(temporary, JSON.stringify(saved));
    await rename(temporary, this.slotFile());
  }

  /** Tells the runtime, once per actual change of the reported status. */
  private emit(): void {
    const key = JSON.stringify(this.status());
    if (key === this.lastEmitted) return;
    this.lastEmitted = key;
    this.options.onChange();
  }
}

function clip(text: string): string {
  return text.length <= MAX_REASON ? text : `${text.slice(0, MAX_REASON - 1)}…`;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
