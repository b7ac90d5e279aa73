import { type Logger, pino } from "pino";

export type { Logger };

/**
 * The one root logger: JSON lines on stdout for the log collector. Components take
 * `logger.child({ component })` so every line says which part of the gateway wrote it.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "edgefleet-gateway", pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      // "level":"warn" reads better in log search than pino's numeric 40.
      level: (label) => ({ level: label }),
    },
  });
}
