import type { Db, Role } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { authenticateApiKey, hashApiKey, LAST_USED_RESOLUTION_MS } from "../src/domain/api-keys";
import { keyCaller, membersByRole, ORG, OTHER_ORG } from "./actors";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let members: Record<Role, ApiSession>;
let bob: ApiSession;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  members = await membersByRole(db);
  bob = await sessionOf(db, "bob@globex.example");
});

afterAll(async () => {
  await testDb?.drop();
});

describe("apiKey.create", () => {
  it("shows the key once and stores only its SHA-256", async () => {
    const created = await callerFor(db, members.admin, ORG).apiKey.create({ name: "ci", role: "operator" });
    expect(created.key).toMatch(/^efk_[A-Za-z0-9_-]{43}$/);
    expect(created.prefix).toBe(created.key.slice(0, 12));
    const row = await db.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.hash).toBe(hashApiKey(created.key));
    expect(JSON.stringify(row)).not.toContain(created.key);
    const listed = await callerFor(db, members.admin, ORG).apiKey.list();
    const entry = listed.items.find((k) => k.id === created.id);
    expect(entry).toMatchObject({ name: "ci", role: "operator", prefix: created.prefix, lastUsedAt: null });
    expect(JSON.stringify(listed)).not.toContain(created.key);
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "apiKey.create", targetId: created.id },
    });
    expect(JSON.stringify(audit)).not.toContain(created.key);
  });

  it("cannot give a key more rights than its creator", async () => {
    await expect(
      callerFor(db, members.admin, ORG).apiKey.create({ name: "too-strong", role: "owner" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    // A key may create keys only up to its own role, too.
    const adminKey = (
      await callerFor(db, members.owner, ORG).apiKey.create({ name: "admin-key", role: "admin" })
    ).key;
    await expect(keyCaller(db, adminKey).apiKey.create({ name: "k2", role: "owner" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(
      keyCaller(db, adminKey).apiKey.create({ name: "k3", role: "viewer" }),
    ).resolves.toMatchObject({
      role: "viewer",
      createdBy: expect.stringMatching(/^apiKey:/),
    });
  });

  it.each([
    ["an empty name", { name: " ", role: "viewer" }],
    ["an unknown role", { name: "x", role: "root" }],
    ["an expiry in the past", { name: "x", role: "viewer", expiresAt: new Date(Date.now() - 1000) }],
  ])("rejects %s with BAD_REQUEST", async (_label, input) => {
    await expect(callerFor(db, members.owner, ORG).apiKey.create(input as never)).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });

  it("refuses a duplicate name with CONFLICT", async () => {
    await callerFor(db, members.owner, ORG).apiKey.create({ name: "dup", role: "viewer" });
    await expect(
      callerFor(db, members.owner, ORG).apiKey.create({ name: "dup", role: "viewer" }),
    ).rejects.toMatchObject({
      code: "CONFLICT",
    });
  });
});

describe("authentication with a key", () => {
  it("acts in the key's organization only, whatever organization is asked for", async () => {
    const acmeKey = (
      await callerFor(db, members.owner, ORG).apiKey.create({ name: "reader", role: "viewer" })
    ).key;
    const caller = keyCaller(db, acmeKey);
    const members_ = await caller.member.list();
    expect(members_.items.map((m) => m.email)).toContain("alice@acme.example");
    expect(members_.items.map((m) => m.email)).not.toContain("bob@globex.example");

    const globexKey = (await callerFor(db, bob, OTHER_ORG).apiKey.create({ name: "g", role: "owner" })).key;
    const acmeToken = await callerFor(db, members.owner, ORG).enrollment.createToken({});
    // The globex key cannot see or touch acme's rows: they are simply not found.
    await expect(keyCaller(db, globexKey).enrollment.revokeToken({ id: acmeToken.id })).rejects.toMatchObject(
      {
        code: "NOT_FOUND",
      },
    );
    const globexMembers = await keyCaller(db, globexKey).member.list();
    expect(globexMembers.items.map((m) => m.email)).toEqual(["bob@globex.example"]);
  });

  it("refuses revoked, expired, unknown and malformed keys with UNAUTHORIZED", async () => {
    const owner = callerFor(db, members.owner, ORG);
    const revoked = await owner.apiKey.create({ name: "to-revoke", role: "viewer" });
    await expect(keyCaller(db, revoked.key).member.list()).resolves.toBeDefined();
    await owner.apiKey.revoke({ id: revoked.id });
    await expect(keyCaller(db, revoked.key).member.list()).rejects.toMatchObject({ code: "UNAUTHORIZED" });

    const expiring = await owner.apiKey.create({
      name: "expiring",
      role: "viewer",
      expiresAt: new Date(Date.now() + 60_000),
    });
    await db.apiKey.update({ where: { id: expiring.id }, data: { expiresAt: new Date(Date.now() - 1) } });
    await expect(keyCaller(db, expiring.key).member.list()).rejects.toMatchObject({ code: "UNAUTHORIZED" });

    await expect(keyCaller(db, `efk_${"x".repeat(43)}`).member.list()).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    await expect(keyCaller(db, "not-a-key").member.list()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("updates lastUsedAt at most once per interval", async () => {
    const created = await callerFor(db, members.owner, ORG).apiKey.create({ name: "usage", role: "viewer" });
    const t0 = new Date("2030-01-01T00:00:00Z");
    expect(await authenticateApiKey(db, created.key, t0)).toMatchObject({ id: created.id, role: "viewer" });
    const lastUsed = async () =>
      (await db.apiKey.findUniqueOrThrow({ where: { id: created.id } })).lastUsedAt;
    expect(await lastUsed()).toEqual(t0);
    await authenticateApiKey(db, created.key, new Date(t0.getTime() + LAST_USED_RESOLUTION_MS - 1));
    expect(await lastUsed()).toEqual(t0);
    const later = new Date(t0.getTime() + LAST_USED_RESOLUTION_MS);
    await authenticateApiKey(db, created.key, later);
    expect(await lastUsed()).toEqual(later);
  });

  it("revocation is audited with before and after; revoking again changes nothing", async () => {
    const owner = callerFor(db, members.owner, ORG);
    const created = await owner.apiKey.create({ name: "audited", role: "viewer" });
    const revoked = await owner.apiKey.revoke({ id: created.id });
    expect(revoked.revokedAt).toBeInstanceOf(Date);
    const rows = await db.auditLog.findMany({ where: { action: "apiKey.revoke", targetId: created.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.before).toMatchObject({ revokedAt: null });
    expect(rows[0]?.after).toMatchObject({ revokedAt: revoked.revokedAt?.toISOString() });
    await expect(owner.apiKey.revoke({ id: created.id })).resolves.toMatchObject({
      revokedAt: revoked.revokedAt,
    });
  });
});
