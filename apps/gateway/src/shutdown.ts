import type { Logger } from "./logger.js";

export interface ShutdownStep {
  name: string;
  run: () => Promise<unknown>;
}

export interface ShutdownOptions {
  logger: Logger;
  timeoutMs: number;
  /** Run in order: stop taking work first, then release what in-flight work was using. */
  steps: ShutdownStep[];
}

/**
 * SIGTERM/SIGINT run the steps and exit 0; if they have not finished within timeoutMs the
 * process exits 1 anyway, so a wedged dependency cannot keep a deployment from rolling.
 */
export function installShutdown({ logger, timeoutMs, steps }: ShutdownOptions): void {
  let started = false;

  const shutdown = async (signal: NodeJS.Signals) => {
    if (started) {
      logger.warn({ signal }, "second signal during shutdown; exiting now");
      process.exit(1);
    }
    started = true;
    const begin = Date.now();
    logger.info({ signal, timeoutMs }, "shutting down");
    setTimeout(() => {
      logger.error({ timeoutMs }, "shutdown did not finish in time; forcing exit");
      process.exit(1);
    }, timeoutMs);

    let failed = false;
    for (const step of steps) {
      try {
        await step.run();
        logger.debug({ step: step.name }, "shutdown step done");
      } catch (error) {
        // Keep going: a failed NATS drain is no reason to leave Postgres connections open.
        failed = true;
        logger.error({ err: error, step: step.name }, "shutdown step failed");
      }
    }
    logger.info({ durationMs: Date.now() - begin }, "shutdown complete");
    process.exit(failed ? 1 : 0);
  };

  process.on("SIGTERM", (signal) => void shutdown(signal));
  process.on("SIGINT", (signal) => void shutdown(signal));
}
