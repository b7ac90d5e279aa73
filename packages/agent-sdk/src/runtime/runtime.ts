import type { ChunkSource } from "../artifacts/chunk-source.js";
import type { AppCommand, ArtifactRef, CommandError, InstanceStatus, RunSpec } from "../protocol/index.js";
import type { AppLog } from "./app-log.js";

/** Resource use of one app's main process, sampled for MetricsReport. */
export interface AppUsage {
  app: string;
  /** CPU per mille of one core since the previous sample. */
  cpu: number;
  /** Resident memory, bytes. */
  mem: number;
}

/** What an operator's app command did: the instance after it, or why it could not be done. */
export type AppOperationResult =
  | { ok: true; inst: InstanceStatus; hl?: { ok: boolean; why?: string } }
  | { ok: false; err: CommandError; why: string };

/**
 * Where desired apps run. The agent calls `put`/`remove` with absolute desired state (re-applying is
 * harmless) and reports `instances()` whenever `onChange` fires.
 */
export interface Runtime {
  /**
   * Runs `app` at `version` (replacing another version, spec or artifact; a no-op if unchanged).
   * With an artifact, the version is fetched and verified first, while the old one keeps running.
   */
  put(app: string, version: string, spec: RunSpec, artifact?: ArtifactRef): void;
  /** Stops and forgets `app` (a no-op if unknown). */
  remove(app: string): void;
  /** Snapshot of every instance, in app-name order. */
  instances(): InstanceStatus[];
  /** Subscribes to state transitions; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
  /** Per-app resource use since the previous call (empty for runtimes without real processes). */
  sampleUsage(): Promise<AppUsage[]>;
  /** Stops every app and waits until they are gone. */
  shutdown(): Promise<void>;
  /**
   * An operator's command on one app (docs/protocol.md, "Commands"): restart the running version,
   * stop it until `start` (or an agent restart, or a new version), start it again, or run its
   * health check once now. Absent: the agent answers `unsupported`.
   */
  operate?(app: string, command: AppCommand): Promise<AppOperationResult>;
  /**
   * The app's recent output (a bounded ring of sanitized lines) for live log sessions; undefined
   * for an app the node does not have. Absent: the agent answers `logs` with `unsupported`.
   */
  appLog?(app: string): AppLog | undefined;
  /** Where artifacts come from (the agent's connection); given once, before the first put. */
  useChunkSource?(source: ChunkSource): void;
}

/** Listener registry shared by runtimes; a throwing listener cannot break a state transition. */
export class ChangeListeners {
  private readonly listeners = new Set<() => void>();

  add(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // A reporting bug must not stop the runtime from supervising processes.
      }
    }
  }
}
