import type { Db, Role } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { keyCaller, membersByRole, ORG } from "./actors";
import { callerFor } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let members: Record<Role, ApiSession>;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  members = await membersByRole(db);
});

afterAll(async () => {
  await testDb?.drop();
});

describe("audit rows written by the middleware", () => {
  it("a mutation writes exactly one row: who, what, target, before, after, when", async () => {
    const before = await db.auditLog.count();
    const startedAt = new Date();
    const token = await callerFor(db, members.operator, ORG).enrollment.createToken({
      description: "line 3",
      maxUses: 5,
    });
    expect(await db.auditLog.count()).toBe(before + 1);
    const row = await db.auditLog.findFirstOrThrow({ where: { targetId: token.id } });
    expect(row).toMatchObject({
      actorType: "user",
      actorId: members.operator.userId,
      action: "enrollmentToken.create",
      targetType: "enrollmentToken",
      targetId: token.id,
      before: null,
      after: expect.objectContaining({ description: "line 3", maxUses: 5 }),
    });
    expect(row.createdAt.getTime()).toBeGreaterThanOrEqual(startedAt.getTime() - 5);
    // The secret and the install command that embeds it never reach the audit log.
    expect(JSON.stringify(row)).not.toContain(token.token);
  });

  it("a key's mutation is attributed to the key", async () => {
    const key = await callerFor(db, members.owner, ORG).apiKey.create({ name: "bot", role: "operator" });
    const token = await keyCaller(db, key.key).enrollment.createToken({});
    const row = await db.auditLog.findFirstOrThrow({ where: { targetId: token.id } });
    expect(row).toMatchObject({ actorType: "apiKey", actorId: key.id });
  });

  it("a forbidden, invalid or failing mutation writes nothing", async () => {
    const before = await db.auditLog.count();
    await expect(callerFor(db, members.viewer, ORG).enrollment.createToken({})).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(
      callerFor(db, members.owner, ORG).enrollment.createToken({ maxUses: -1 } as never),
    ).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(
      callerFor(db, members.owner, ORG).enrollment.revokeToken({
        id: "0190a8f0-0000-7000-8000-000000000000",
      }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await db.auditLog.count()).toBe(before);
  });

  it("queries write nothing", async () => {
    const before = await db.auditLog.count();
    await callerFor(db, members.owner, ORG).audit.list({});
    await callerFor(db, members.owner, ORG).member.list();
    expect(await db.auditLog.count()).toBe(before);
  });
});

describe("audit.list", () => {
  it("filters by actor, action (exact or prefix), target and time; pages by cursor without gaps", async () => {
    const owner = callerFor(db, members.owner, ORG);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await owner.enrollment.createToken({ description: `t${i}` })).id);
    await owner.enrollment.revokeToken({ id: ids[0] ?? "" });

    const byActor = await owner.audit.list({
      actorId: members.owner.userId,
      action: "enrollmentToken.create",
      limit: 100,
    });
    expect(byActor.items.map((e) => e.targetId).sort()).toEqual([...ids].sort());
    expect(byActor.items.every((e) => e.actorId === members.owner.userId)).toBe(true);

    const prefix = await owner.audit.list({ action: "enrollmentToken.", targetId: ids[0], limit: 100 });
    expect(prefix.items.map((e) => e.action)).toEqual(["enrollmentToken.revoke", "enrollmentToken.create"]);

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await owner.audit.list({
        actorId: members.owner.userId,
        action: "enrollmentToken.create",
        limit: 3,
        ...(cursor ? { cursor } : {}),
      });
      seen.push(...page.items.map((e) => e.id));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor && pages < 20);
    expect(seen).toEqual(byActor.items.map((e) => e.id));
    expect(pages).toBe(3);

    const future = await owner.audit.list({ from: new Date(Date.now() + 3_600_000) });
    expect(future.items).toEqual([]);
    const past = await owner.audit.list({ to: new Date(0) });
    expect(past.items).toEqual([]);
  });

  it("rejects a bad cursor and an inverted time range with BAD_REQUEST", async () => {
    const owner = callerFor(db, members.owner, ORG);
    await expect(owner.audit.list({ cursor: "garbage" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(owner.audit.list({ from: new Date(2), to: new Date(1) })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });

  it("shows only the organization's own entries", async () => {
    const bob = await import("./callers").then((m) => m.sessionOf(db, "bob@globex.example"));
    await callerFor(db, bob, "globex").enrollment.createToken({ description: "globex" });
    const acme = await callerFor(db, members.owner, ORG).audit.list({ limit: 500 });
    const acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: ORG } })).id;
    const foreign = await db.auditLog.count({ where: { organizationId: { not: acmeId } } });
    expect(foreign).toBeGreaterThan(0);
    expect(acme.items.length).toBe(await db.auditLog.count({ where: { organizationId: acmeId } }));
  });

  it("names each entry's actor: a member's e-mail, a key's name; a former member or a foreign id stays unnamed", async () => {
    const owner = callerFor(db, members.owner, ORG);
    const key = await owner.apiKey.create({ name: "named-bot", role: "operator" });
    const byKey = await keyCaller(db, key.key).enrollment.createToken({ description: "by key" });
    const byOperator = await callerFor(db, members.operator, ORG).enrollment.createToken({
      description: "by olga",
    });
    // An entry whose actor is another organization's member (as if forged): their e-mail must not leak.
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    const bob = await db.user.findUniqueOrThrow({ where: { email: "bob@globex.example" } });
    const forged = await db.auditLog.create({
      data: {
        organizationId: acme.id,
        actorType: "user",
        actorId: bob.id,
        action: "test.forged",
        targetType: "test",
      },
    });

    const entries = (await owner.audit.list({ limit: 500 })).items;
    const entryOf = (targetId: string) => entries.find((entry) => entry.targetId === targetId);
    expect(entryOf(byKey.id)).toMatchObject({ actorType: "apiKey", actorName: "named-bot" });
    expect(entryOf(byOperator.id)).toMatchObject({ actorType: "user", actorName: "olga@acme.example" });
    expect(entries.find((entry) => entry.id === forged.id)).toMatchObject({
      actorId: bob.id,
      actorName: null,
    });

    // Olga leaves: her entries keep her id and lose her name.
    await owner.member.remove({ userId: members.operator.userId });
    const after = (await owner.audit.list({ limit: 500 })).items.find(
      (entry) => entry.targetId === byOperator.id,
    );
    expect(after).toMatchObject({ actorId: members.operator.userId, actorName: null });
  });
});
