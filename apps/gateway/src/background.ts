import type { Logger } from "./logger.js";
import { backgroundFailures } from "./metrics.js";

/**
 * Runs work that nobody awaits (a timer tick, a message handler started per message) so that its
 * failure is logged and counted instead of becoming an unhandled rejection, which ends the
 * process (main.ts): a slow Postgres (pool connect timeouts) must degrade the gateway, not stop
 * it. The returned promise never rejects; the work is retried by whoever ticks it next.
 */
export function runInBackground(logger: Logger, task: string, work: () => Promise<unknown>): Promise<void> {
  let running: Promise<unknown>;
  try {
    running = work();
  } catch (error) {
    running = Promise.reject(error);
  }
  return running.then(
    () => undefined,
    (error: unknown) => {
      backgroundFailures.inc({ task });
      logger.error({ err: error, task }, `${task} failed; will retry`);
    },
  );
}
