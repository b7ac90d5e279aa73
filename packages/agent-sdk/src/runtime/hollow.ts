import { createHash } from "node:crypto";
import { type BackoffPolicy, fullJitterDelay } from "../agent/backoff.js";
import type { ChunkSource } from "../artifacts/chunk-source.js";
import {
  type AppCommand,
  type ArtifactRef,
  type InstanceState,
  type InstanceStatus,
  MAX_ARTIFACT_BYTES,
  MAX_ARTIFACT_CHUNK_BYTES,
  type RunSpec,
} from "../protocol/index.js";
import { AppLog } from "./app-log.js";
import { type AppOperationResult, type AppUsage, ChangeListeners, type Runtime } from "./runtime.js";

export interface HollowRuntimeOptions {
  /** Each transition (pending → [pulling →] starting → running) waits a random time in this range, ms. */
  stepMs?: [number, number];
  random?: () => number;
  /**
   * Really download artifacts through the agent's chunk source (as the real fetcher does: 4
   * chunks in flight, SHA-256 checked; the bytes are discarded). Default off: 10,000 hollow agents cannot each pull a real
   * artifact, so by default pulling is simulated (half of `simulatedArtifactBytes`, then all).
   */
  fetchArtifacts?: boolean;
  /** Size a simulated pull reports (default 1 MiB). */
  simulatedArtifactBytes?: number;
  /**
   * Per-app resource use to report for the version that runs (MetricsReport `apps`), e.g. a CPU
   * hog for one version in a metric-gate test. Default: none (no per-app series, as before).
   */
  usage?: HollowUsage;
  /**
   * When a running app crashes by itself (a crash loop for a metric-gate benchmark): asked each
   * time the instance reaches `running`. Default: never (hollow apps restart only when asked).
   */
  crashes?: HollowCrashes;
}

/**
 * CPU (‰ of one core) and memory (bytes) of `app` running `version`, which has been running for
 * `runningForMs` (since its last start: a leak grows with it); null: report nothing.
 */
export type HollowUsage = (
  app: string,
  version: string,
  runningForMs: number,
) => { cpu: number; mem: number } | null;

/**
 * Whether `app` running `version`, just (re)started after `crashesSoFar` crashes of this version on
 * this node, crashes again: `afterMs` later it exits (state `failed`, as the process runtime reports
 * an app that died) and `downMs` after that it is started again (the restart count goes up,
 * `starting`, then `running`), as the process runtime restarts with backoff. null: it keeps running.
 */
export type HollowCrashes = (
  app: string,
  version: string,
  crashesSoFar: number,
) => { afterMs: number; downMs: number } | null;

/** The real fetcher's default chunk retry policy and window (artifacts/fetcher.ts). */
const CHUNK_RETRY: BackoffPolicy = { baseMs: 500, maxMs: 30_000 };
const CHUNK_WINDOW = 4;
/** The real runtimes' pulling progress interval (app-slot.ts, the Go agent's slot.go). */
const PROGRESS_INTERVAL_MS = 2_000;

interface HollowInstance {
  app: string;
  version: string;
  spec: string;
  art: string;
  state: InstanceState;
  /** The version that "runs" (observed), kept while the next one pulls. */
  running: string | undefined;
  why?: string;
  pulled?: { done: number; total: number };
  timer: NodeJS.Timeout | undefined;
  cancelled: boolean;
  /** Restarts: by an operator, or after a crash (`crashes`). */
  restarts: number;
  /** When the version that runs last started (Date.now()); its usage model may depend on it. */
  runningSince: number | undefined;
  /** Crashed and waiting for its restart (no process, so no usage). */
  crashed: boolean;
  /** Crashes of this version so far. */
  crashes: number;
  /** Made at the first log session (10,000 hollow nodes keep no rings they are never asked for). */
  log?: AppLog | undefined;
}

/**
 * Pretends to run apps: state transitions on timers, no processes. For load tests with thousands of
 * simulated agents in one process, speaking the real protocol.
 */
export class HollowRuntime implements Runtime {
  private readonly apps = new Map<string, HollowInstance>();
  private readonly listeners = new ChangeListeners();
  private readonly stepMs: [number, number];
  private readonly random: () => number;
  private chunkSource: ChunkSource | undefined;

  constructor(private readonly options: HollowRuntimeOptions = {}) {
    this.stepMs = options.stepMs ?? [20, 200];
    this.random = options.random ?? Math.random;
  }

  useChunkSource(source: ChunkSource): void {
    this.chunkSource = source;
  }

  put(app: string, version: string, spec: RunSpec, artifact?: ArtifactRef): void {
    const specKey = JSON.stringify(spec);
    const artKey = JSON.stringify(artifact ?? null);
    const current = this.apps.get(app);
    if (current && current.version === version && current.spec === specKey && current.art === artKey) return;
    if (current) {
      clearTimeout(current.timer);
      current.cancelled = true;
    }
    const instance: HollowInstance = {
      app,
      version,
      spec: specKey,
      art: artKey,
      state: "pending",
      running: current?.state === "running" ? current.version : current?.running,
      timer: undefined,
      cancelled: false,
      restarts: current?.restarts ?? 0,
      runningSince: current?.state === "running" ? current.runningSince : undefined,
      crashed: false,
      crashes: 0,
      log: current?.log,
    };
    instance.log?.append(`hollow: ${app} ${version} requested`);
    this.apps.set(app, instance);
    this.listeners.emit();
    const start = () =>
      this.advance(instance, "starting", () =>
        this.advance(instance, "running", () => this.started(instance)),
      );
    if (!artifact) start();
    else if (this.options.fetchArtifacts && this.chunkSource)
      void this.fetchForReal(instance, this.chunkSource, artifact).then(start, (error: unknown) => {
        if (instance.cancelled) return;
        instance.state = "failed";
        instance.why = error instanceof Error ? error.message : String(error);
        this.listeners.emit();
      });
    else this.simulatePull(instance, start);
  }

  remove(app: string): void {
    const current = this.apps.get(app);
    if (!current) return;
    clearTimeout(current.timer);
    this.apps.delete(app);
    this.listeners.emit();
  }

  instances(): InstanceStatus[] {
    return [...this.apps.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([app, instance]): InstanceStatus => {
        // A crash of the version that ran is that version failing (the process runtime's report:
        // no target); any other failure is a switch that failed, with the old version still on.
        const switching =
          instance.state === "pending" ||
          instance.state === "pulling" ||
          (instance.state === "failed" && !instance.crashed);
        const ver = switching ? instance.running : instance.version;
        return {
          app,
          ...(ver !== undefined ? { ver } : {}),
          st: instance.state,
          ...(instance.why !== undefined ? { why: instance.why } : {}),
          rs: instance.restarts,
          ...(instance.state === "pulling" || (instance.state === "failed" && !instance.crashed)
            ? { tgt: instance.version }
            : {}),
          ...(instance.state === "pulling" && instance.pulled
            ? { pb: instance.pulled.done, pt: instance.pulled.total }
            : {}),
        };
      });
  }

  /** Answers like a real runtime, without processes: restart counts, stop holds, health is healthy. */
  async operate(app: string, command: AppCommand): Promise<AppOperationResult> {
    const instance = this.apps.get(app);
    if (!instance) return { ok: false, err: "unknown_app", why: `no app ${app} on this node` };
    if (instance.state !== "running" && instance.state !== "stopped") {
      return { ok: false, err: "not_running", why: `app ${app} is ${instance.state}` };
    }
    const status = () => this.instances().find((entry) => entry.app === app) as InstanceStatus;
    // Every operation leaves a line in the app's output, as a real app's would show the restart
    // or the probe it answered (what the console's log viewer shows live).
    instance.log?.append(`hollow: ${app} ${command} by an operator`);
    if (command === "health") return { ok: true, inst: status(), hl: { ok: instance.state === "running" } };
    if (command === "restart") instance.restarts++;
    instance.state = command === "stop" ? "stopped" : "running";
    if (command === "stop") instance.why = "stopped by an operator";
    else delete instance.why;
    this.listeners.emit();
    return { ok: true, inst: status() };
  }

  onChange(listener: () => void): () => void {
    return this.listeners.add(listener);
  }

  /** A hollow app's "output": a line per state it went through since the first session asked. */
  appLog(app: string): AppLog | undefined {
    const instance = this.apps.get(app);
    if (!instance) return undefined;
    if (!instance.log) {
      instance.log = new AppLog(16 * 1024);
      instance.log.append(`hollow: ${app} ${instance.version} is ${instance.state}`);
    }
    return instance.log;
  }

  async sampleUsage(): Promise<AppUsage[]> {
    const usage = this.options.usage;
    if (!usage) return [];
    const sampled: AppUsage[] = [];
    for (const [app, instance] of [...this.apps.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      // What runs: the version itself once running, else the previous one while the next pulls.
      if (instance.crashed) continue;
      const runs = instance.state === "running" ? instance.version : instance.running;
      const runningForMs = Date.now() - (instance.runningSince ?? Date.now());
      const one = runs === undefined ? null : usage(app, runs, runningForMs);
      if (one)
        sampled.push({ app, cpu: Math.max(0, Math.round(one.cpu)), mem: Math.max(0, Math.round(one.mem)) });
    }
    return sampled;
  }

  async shutdown(): Promise<void> {
    for (const instance of this.apps.values()) {
      clearTimeout(instance.timer);
      instance.state = "stopped";
    }
    this.listeners.emit();
  }

  /** Pending → pulling half → pulling all, on timers: what a real pull reports, without the bytes. */
  private simulatePull(instance: HollowInstance, then: () => void): void {
    const total = this.options.simulatedArtifactBytes ?? 1024 * 1024;
    const step = (done: number, next: () => void) =>
      this.later(instance, () => {
        instance.state = "pulling";
        instance.pulled = { done, total };
        this.listeners.emit();
        next();
      });
    step(Math.floor(total / 2), () => step(total, then));
  }

  /**
   * Pulls like the real fetcher (artifacts/fetcher.ts): up to CHUNK_WINDOW requests in flight,
   * chunks hashed in order and dropped (the real wire traffic of a pull, in little memory), and
   * progress reported like the real runtimes (app-slot.ts: at most every PROGRESS_INTERVAL_MS).
   */
  private async fetchForReal(instance: HollowInstance, source: ChunkSource, art: ArtifactRef): Promise<void> {
    const obj = art.obj ?? art.sha;
    const hash = createHash("sha256");
    instance.state = "pulling";
    const first = await this.hollowChunk(instance, source, obj, 0);
    if (first === null) return;
    const total = first.size;
    if (total > MAX_ARTIFACT_BYTES) throw new Error(`artifact is ${total} bytes, over the limit`);
    let done = 0;
    let lastEmit = 0;
    const append = (data: Uint8Array) => {
      if (data.byteLength === 0 && done < total) throw new Error("empty chunk");
      hash.update(data);
      done += data.byteLength;
      instance.pulled = { done, total };
      if (Date.now() - lastEmit >= PROGRESS_INTERVAL_MS || done >= total) {
        lastEmit = Date.now();
        this.listeners.emit();
      }
    };
    append(first.data);
    const ready = new Map<number, Uint8Array>();
    const inFlight = new Set<Promise<void>>();
    let next = done;
    let failure: unknown;
    let stopped = false;
    while (done < total && failure === undefined && !stopped) {
      while (inFlight.size < CHUNK_WINDOW && next < total) {
        const offset = next;
        next += Math.min(MAX_ARTIFACT_CHUNK_BYTES, total - offset);
        const pending: Promise<void> = this.hollowChunk(instance, source, obj, offset)
          .then(
            (answer) => {
              if (answer === null) stopped = true;
              else if (answer.size !== total) failure ??= new Error("artifact size changed during the pull");
              else ready.set(offset, answer.data);
            },
            (error: unknown) => {
              failure ??= error;
            },
          )
          .finally(() => inFlight.delete(pending));
        inFlight.add(pending);
      }
      await Promise.race(inFlight);
      for (let data = ready.get(done); data !== undefined; data = ready.get(done)) {
        ready.delete(done);
        append(data);
      }
    }
    if (failure !== undefined) throw failure;
    if (stopped || instance.cancelled) return;
    const digest = hash.digest("hex");
    if (digest !== art.sha) throw new Error(`artifact SHA-256 mismatch: expected ${art.sha}, got ${digest}`);
  }

  /**
   * One chunk; unanswered ones (gateway restarting, no responders) are retried like the real
   * fetcher does (full-jitter backoff, 0.5 s doubling to 30 s, no attempt limit), so a controller
   * restart mid-pull delays a hollow node exactly as it would a real one. null: cancelled.
   */
  private async hollowChunk(
    instance: HollowInstance,
    source: ChunkSource,
    obj: string,
    offset: number,
  ): Promise<{ size: number; data: Uint8Array } | null> {
    let answer = await source.chunk(obj, offset, MAX_ARTIFACT_CHUNK_BYTES).catch(() => null);
    for (let attempt = 1; answer === null && !instance.cancelled; attempt++) {
      await new Promise((resolve) =>
        setTimeout(resolve, fullJitterDelay(attempt - 1, CHUNK_RETRY, this.random)),
      );
      if (instance.cancelled) return null;
      answer = await source.chunk(obj, offset, MAX_ARTIFACT_CHUNK_BYTES).catch(() => null);
    }
    if (instance.cancelled || answer === null) return null;
    if (!answer.ok) throw new Error(`artifact ${answer.err}${answer.why ? `: ${answer.why}` : ""}`);
    return answer;
  }

  /**
   * The instance's version runs (first start or restart): it is now what runs, even when it fails
   * later (a crash reports this version failed, not the one before), and its crash model is asked.
   */
  private started(instance: HollowInstance): void {
    instance.running = instance.version;
    instance.runningSince = Date.now();
    const crash = this.options.crashes?.(instance.app, instance.version, instance.crashes);
    if (!crash) return;
    instance.timer = setTimeout(() => {
      if (instance.cancelled || instance.state !== "running") return;
      instance.state = "failed";
      instance.crashed = true;
      instance.crashes++;
      instance.why = "exited with code 1";
      instance.log?.append(`hollow: ${instance.version} crashed`);
      this.listeners.emit();
      instance.timer = setTimeout(() => {
        if (instance.cancelled || !instance.crashed) return;
        instance.crashed = false;
        instance.restarts++;
        delete instance.why;
        instance.state = "starting";
        this.listeners.emit();
        this.advance(instance, "running", () => this.started(instance));
      }, crash.downMs);
      instance.timer.unref();
    }, crash.afterMs);
    instance.timer.unref();
  }

  private later(instance: HollowInstance, task: () => void): void {
    const [min, max] = this.stepMs;
    instance.timer = setTimeout(task, min + this.random() * (max - min));
    instance.timer.unref();
  }

  private advance(instance: HollowInstance, state: InstanceState, then?: () => void): void {
    const [min, max] = this.stepMs;
    instance.timer = setTimeout(
      () => {
        instance.state = state;
        instance.log?.append(`hollow: ${instance.version} ${state}`);
        this.listeners.emit();
        then?.();
      },
      min + this.random() * (max - min),
    );
    instance.timer.unref();
  }
}
