/** Minimal structured logger: the agent avoids a logging library to keep its RSS small. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** One JSON object per line on stderr (stdout stays free for command output). */
export function jsonLogger(base: Record<string, unknown> = {}): Logger {
  const write = (level: string, message: string, fields?: Record<string, unknown>) => {
    process.stderr.write(
      `${JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...base, ...fields })}\n`,
    );
  };
  return {
    info: (message, fields) => write("info", message, fields),
    warn: (message, fields) => write("warn", message, fields),
    error: (message, fields) => write("error", message, fields),
  };
}
