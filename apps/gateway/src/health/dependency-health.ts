import type { Gauge } from "prom-client";
import type { Logger } from "../logger.js";

export const DEPENDENCIES = ["nats", "postgres", "mimir"] as const;
export type DependencyName = (typeof DEPENDENCIES)[number];

/** "starting" until the first check completes, so /readyz can tell "not yet" from "lost it". */
export type DependencyState = "starting" | "up" | "down";

export interface DependencyStatus {
  state: DependencyState;
  /** When the dependency entered this state (ISO time). */
  since: string;
  lastCheckedAt: string | null;
  /** Why the last check failed; null while up. */
  lastError: string | null;
}

/**
 * The single source of truth for "can the gateway do its job": /readyz, the dependency_up gauge
 * and the transition log lines all read from here, so they can never disagree.
 */
export class DependencyHealth {
  private readonly statuses = new Map<DependencyName, DependencyStatus>();

  constructor(
    private readonly logger: Logger,
    private readonly dependencyUp: Gauge<"dependency">,
  ) {
    const now = new Date().toISOString();
    for (const name of DEPENDENCIES) {
      this.statuses.set(name, { state: "starting", since: now, lastCheckedAt: null, lastError: null });
      this.dependencyUp.set({ dependency: name }, 0);
    }
  }

  markUp(name: DependencyName, details: Record<string, unknown> = {}): void {
    this.transition(name, "up", null, details);
  }

  markDown(name: DependencyName, reason: string): void {
    this.transition(name, "down", reason, {});
  }

  allUp(): boolean {
    return [...this.statuses.values()].every((status) => status.state === "up");
  }

  snapshot(): Record<DependencyName, DependencyStatus> {
    return Object.fromEntries([...this.statuses].map(([name, status]) => [name, { ...status }])) as Record<
      DependencyName,
      DependencyStatus
    >;
  }

  private transition(
    name: DependencyName,
    state: DependencyState,
    reason: string | null,
    details: Record<string, unknown>,
  ): void {
    const now = new Date().toISOString();
    const previous = this.statuses.get(name);
    const changed = previous?.state !== state;
    this.statuses.set(name, {
      state,
      since: changed || !previous ? now : previous.since,
      lastCheckedAt: now,
      lastError: reason,
    });
    this.dependencyUp.set({ dependency: name }, state === "up" ? 1 : 0);
    // Only transitions are logged here; retries while down are logged by the probe loop.
    if (!changed) return;
    if (state === "up") {
      this.logger.info({ dependency: name, previousState: previous?.state, ...details }, `${name} is up`);
    } else {
      this.logger.warn({ dependency: name, previousState: previous?.state, reason }, `${name} is down`);
    }
  }
}
