import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase();
});

afterAll(async () => {
  await testDb?.drop();
});

describe("organization.listMine", () => {
  it("lists only the caller's organizations, with the caller's role", async () => {
    const alice = await sessionOf(testDb.db, "alice@acme.example");
    const mine = await callerFor(testDb.db, alice, null).organization.listMine();
    expect(mine).toEqual([{ id: expect.any(String), slug: "acme", name: "Acme Energy", role: "owner" }]);
  });

  it("needs a session", async () => {
    await expect(callerFor(testDb.db, null, null).organization.listMine()).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });
});
