import type { InstanceState, InstanceStatus, RunSpec } from "../protocol/index.js";
import { type AppUsage, ChangeListeners, type Runtime } from "./runtime.js";

export interface HollowRuntimeOptions {
  /** Each transition (pending → starting → running) waits a random time in this range, ms. */
  stepMs?: [number, number];
  random?: () => number;
}

interface HollowInstance {
  version: string;
  spec: string;
  state: InstanceState;
  timer: NodeJS.Timeout | undefined;
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

  constructor(options: HollowRuntimeOptions = {}) {
    this.stepMs = options.stepMs ?? [20, 200];
    this.random = options.random ?? Math.random;
  }

  put(app: string, version: string, spec: RunSpec): void {
    const specKey = JSON.stringify(spec);
    const current = this.apps.get(app);
    if (current && current.version === version && current.spec === specKey) return;
    clearTimeout(current?.timer);
    const instance: HollowInstance = { version, spec: specKey, state: "pending", timer: undefined };
    this.apps.set(app, instance);
    this.listeners.emit();
    this.advance(instance, "starting", () => this.advance(instance, "running"));
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
      .map(([app, instance]) => ({
        app,
        ...(instance.state === "pending" ? {} : { ver: instance.version }),
        st: instance.state,
        rs: 0,
      }));
  }

  onChange(listener: () => void): () => void {
    return this.listeners.add(listener);
  }

  async sampleUsage(): Promise<AppUsage[]> {
    return [];
  }

  async shutdown(): Promise<void> {
    for (const instance of this.apps.values()) {
      clearTimeout(instance.timer);
      instance.state = "stopped";
    }
    this.listeners.emit();
  }

  private advance(instance: HollowInstance, state: InstanceState, then?: () => void): void {
    const [min, max] = this.stepMs;
    instance.timer = setTimeout(
      () => {
        instance.state = state;
        this.listeners.emit();
        then?.();
      },
      min + this.random() * (max - min),
    );
    instance.timer.unref();
  }
}
