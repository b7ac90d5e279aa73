import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isDataException, postgresErrorCode } from "../src/errors";
import { createMigratedDatabase, type TestDatabase } from "./support/test-database";

// Real Postgres errors through the real Prisma client and driver adapter: the shapes the gateway's
// ingest and the API's error mapping classify (issue 8, #4 and #6).

let database: TestDatabase;

beforeAll(async () => {
  database = await createMigratedDatabase();
});
afterAll(async () => {
  await database?.drop();
});

async function failureOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected the query to fail");
}

describe("Postgres error classification", () => {
  it.each([
    ["NUL in text (raw query)", "22021", () => database.db.$executeRawUnsafe("SELECT $1::text", "a\u0000b")],
    ["int4 overflow", "22003", () => database.db.$executeRawUnsafe("SELECT $1::int4", 2 ** 31)],
    ["malformed timestamp", "22007", () => database.db.$queryRawUnsafe("SELECT $1::timestamptz", "nonsense")],
    [
      "NUL in a model query",
      "22021",
      () => database.db.node.findMany({ where: { name: { contains: "a\u0000" } } }),
    ],
  ])("%s is a data exception (%s)", async (_what, code, run) => {
    const error = await failureOf(run);
    expect(postgresErrorCode(error)).toBe(code);
    expect(isDataException(error)).toBe(true);
  });

  it("a unique violation or a lost connection is not a data exception", async () => {
    const org = await database.db.organization.create({ data: { slug: "errors-a", name: "A" } });
    const duplicate = await failureOf(() =>
      database.db.organization.create({ data: { slug: org.slug, name: "again" } }),
    );
    expect(isDataException(duplicate)).toBe(false);
    expect(isDataException(new Error("connect ECONNREFUSED 127.0.0.1:5432"))).toBe(false);
    expect(postgresErrorCode(undefined)).toBeUndefined();
  });
});
