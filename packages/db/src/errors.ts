/**
 * Postgres error classification, whatever layer wrapped it (Prisma's known-request error with a
 * driver adapter error in `meta`, or the adapter's error itself with the details in `cause`).
 */

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** The SQLSTATE of a Postgres error anywhere in the chain, e.g. "22003"; undefined otherwise. */
export function postgresErrorCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const current = queue.shift();
    if (!current || typeof current !== "object" || seen.has(current)) continue;
    seen.add(current);
    const record = current as Record<string, unknown>;
    // The driver adapter keeps Postgres's own code in `originalCode` (Prisma's `code` is "P2010").
    const value = record.originalCode;
    if (typeof value === "string" && SQLSTATE.test(value)) return value;
    const meta = record.meta as Record<string, unknown> | undefined;
    queue.push(record.cause, meta?.driverAdapterError);
  }
  return undefined;
}

/**
 * Class 22 "data exception": the values themselves cannot be stored or compared (NUL in text,
 * an integer out of range, a malformed timestamp). Retrying the same values can never succeed,
 * so it is the input's fault, never a reason to redeliver or to answer 500.
 */
export function isDataException(error: unknown): boolean {
  return postgresErrorCode(error)?.startsWith("22") ?? false;
}

/**
 * Prisma refused to turn a value into a query argument (a date past year 9999, an integer past
 * bigint): like a data exception, the value's fault, and the same at every retry.
 */
export function isUnconvertibleArgument(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === "PrismaClientValidationError" ||
      (error.name === "PrismaClientUnknownRequestError" &&
        error.message.includes("Could not convert argument value")))
  );
}
