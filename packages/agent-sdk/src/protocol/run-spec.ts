import { z } from "zod";

/**
 * How the agent's process runtime runs an app version (`AppVersion.runSpec` in Postgres, `spec` in
 * DesiredDelta). Long field names on purpose: it travels only when a version changes, and the same
 * JSON is what operators write in the console and in Terraform.
 */
export const healthCheckSchema = z
  .object({
    /** Command run without a shell; exit code 0 = healthy. */
    exec: z.array(z.string().min(1).max(4096)).min(1).max(64).optional(),
    /** URL fetched with GET; any 2xx/3xx = healthy. */
    http: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional(),
    intervalSeconds: z.int().min(1).max(3600).optional(),
    timeoutSeconds: z.int().min(1).max(600).optional(),
    /** Consecutive failures of a running app before it is restarted. */
    failureThreshold: z.int().min(1).max(100).optional(),
  })
  .refine((check) => (check.exec === undefined) !== (check.http === undefined), {
    message: "a health check has exactly one of exec or http",
  });
export type HealthCheck = z.output<typeof healthCheckSchema>;

export const RESTART_POLICIES = ["always", "on-failure", "never"] as const;
export type RestartPolicy = (typeof RESTART_POLICIES)[number];

export const runSpecSchema = z.object({
  /** Program and arguments, run without a shell. */
  command: z.array(z.string().min(1).max(4096)).min(1).max(256),
  env: z
    .record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "environment variable names are [A-Za-z_][A-Za-z0-9_]*"),
      z.string().max(32_768),
    )
    .optional(),
  /** Working directory; default: the agent's state dir `apps/<app>`. */
  cwd: z.string().min(1).max(4096).optional(),
  health: healthCheckSchema.optional(),
  /** Default "always". */
  restart: z.enum(RESTART_POLICIES).optional(),
  /** SIGTERM → SIGKILL grace period; default 10 s. */
  stopGraceSeconds: z.int().min(0).max(600).optional(),
  /**
   * Default false. When a new version fails within its start window (see startWindowMs), the
   * agent goes back to the previous version it kept on disk, and reports the new one `failed`.
   */
  revertOnFailure: z.boolean().optional(),
});
export type RunSpec = z.output<typeof runSpecSchema>;

const DEFAULT_HEALTH_INTERVAL_SECONDS = 10;
const DEFAULT_HEALTH_TIMEOUT_SECONDS = 5;
const DEFAULT_HEALTH_FAILURE_THRESHOLD = 3;
/** Start window of a version without a health check: it must stay up this long. */
const UNCHECKED_START_WINDOW_MS = 10_000;

/**
 * How long a newly started version is on probation: if its process ends or its health check
 * fails `failureThreshold` times within this window, the switch to it failed (and the agent
 * reverts when `revertOnFailure`). With a health check: interval × threshold + timeout (35 s with
 * the defaults, the time the check needs to reach a verdict); without: 10 s of staying up.
 */
export function startWindowMs(spec: RunSpec): number {
  const health = spec.health;
  if (!health) return UNCHECKED_START_WINDOW_MS;
  const interval = health.intervalSeconds ?? DEFAULT_HEALTH_INTERVAL_SECONDS;
  const threshold = health.failureThreshold ?? DEFAULT_HEALTH_FAILURE_THRESHOLD;
  const timeout = health.timeoutSeconds ?? DEFAULT_HEALTH_TIMEOUT_SECONDS;
  return (interval * threshold + timeout) * 1000;
}
