/**
 * Time in this package: every instant is a number of milliseconds since the Unix epoch (UTC).
 * Numbers compare without surprises, survive JSON (the controller keeps plans and progress in
 * JSONB) and make the caller's clock an explicit input: nothing here reads the system clock.
 */
export type EpochMs = number;

export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
