/**
 * Read-by-id of API keys, enrollment tokens and members, and the key's own organization (issue 15:
 * the Terraform provider refreshes each resource by id). Another organization's id answers
 * NOT_FOUND, exactly like an id that does not exist; the roles are those of the lists.
 */
import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeysByRole, keyCaller, ORG, OTHER_ORG } from "./actors";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let owner: ReturnType<typeof callerFor>;
let outsider: ReturnType<typeof callerFor>;
let keys: Awaited<ReturnType<typeof apiKeysByRole>>;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  const alice = await sessionOf(db, "alice@acme.example");
  owner = callerFor(db, alice, ORG);
  outsider = callerFor(db, await sessionOf(db, "bob@globex.example"), OTHER_ORG);
  keys = await apiKeysByRole(db, alice, ORG);
});

afterAll(async () => {
  await testDb?.drop();
});

const MISSING = "00000000-0000-4000-8000-000000000000";

describe("organization.current", () => {
  it("answers the API key's organization and the key's role", async () => {
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    expect(await keyCaller(db, keys.operator).organization.current()).toEqual({
      id: acme.id,
      slug: ORG,
      name: acme.name,
      role: "operator",
    });
  });
});

describe("apiKey.byId", () => {
  it("reads a key without its secret, revoked ones too; another organization gets NOT_FOUND", async () => {
    const created = await owner.apiKey.create({ name: "read me", role: "viewer" });
    const read = await owner.apiKey.byId({ id: created.id });
    expect(read).toMatchObject({ id: created.id, name: "read me", role: "viewer", revokedAt: null });
    expect(read).not.toHaveProperty("key");
    await owner.apiKey.revoke({ id: created.id });
    expect((await owner.apiKey.byId({ id: created.id })).revokedAt).toBeInstanceOf(Date);
    await expect(outsider.apiKey.byId({ id: created.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(owner.apiKey.byId({ id: MISSING })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("is for admins, like the list", async () => {
    const created = await owner.apiKey.create({ name: "operator may not read", role: "viewer" });
    await expect(keyCaller(db, keys.operator).apiKey.byId({ id: created.id })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });
});

describe("enrollment.getToken", () => {
  it("reads a token without its secret; another organization gets NOT_FOUND", async () => {
    const created = await owner.enrollment.createToken({ description: "read me", labels: { tier: "edge" } });
    const read = await keyCaller(db, keys.operator).enrollment.getToken({ id: created.id });
    expect(read).toMatchObject({
      id: created.id,
      description: "read me",
      labels: { tier: "edge" },
      usable: true,
    });
    expect(read).not.toHaveProperty("token");
    await expect(outsider.enrollment.getToken({ id: created.id })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(keyCaller(db, keys.viewer).enrollment.getToken({ id: created.id })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });
});

describe("member.byId", () => {
  it("reads one member; a member of another organization is NOT_FOUND", async () => {
    const invited = await owner.member.invite({ email: "read-me@acme.example", role: "viewer" });
    expect(await keyCaller(db, keys.viewer).member.byId({ userId: invited.userId })).toMatchObject({
      userId: invited.userId,
      email: "read-me@acme.example",
      role: "viewer",
      pending: true,
    });
    await expect(outsider.member.byId({ userId: invited.userId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(owner.member.byId({ userId: MISSING })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
