import { z } from "zod";

/** Earliest and latest instants any input date may name: what Postgres and Prisma both store. */
export const EARLIEST_DATE = new Date("1970-01-01T00:00:00.000Z");
export const LATEST_DATE = new Date("9999-12-31T23:59:59.999Z");

/**
 * A date from a query string or JSON, within 1970–9999: JavaScript accepts years up to 275760,
 * which the database cannot store or compare (issue 8, #6). The message names the range.
 */
export const boundedDate = z.coerce
  .date()
  .min(EARLIEST_DATE, { error: "must be on or after 1970-01-01" })
  .max(LATEST_DATE, { error: "must be on or before 9999-12-31" });
