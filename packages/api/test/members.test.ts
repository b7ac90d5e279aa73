import type { Db, Role } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { addMember, membersByRole, ORG } from "./actors";
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

describe("members", () => {
  it("lists the organization's members with role and pending state", async () => {
    const list = await callerFor(db, members.viewer, ORG).member.list();
    expect(list.items.map((m) => [m.email, m.role])).toEqual([
      ["adam@acme.example", "admin"],
      ["alice@acme.example", "owner"],
      ["olga@acme.example", "operator"],
      ["vera@acme.example", "viewer"],
    ]);
    expect(list.items.find((m) => m.email === "alice@acme.example")?.pending).toBe(true); // seeded, never signed in
    expect(list.caller).toEqual({ type: "user", id: members.viewer.userId, role: "viewer" });
  });

  it("invites by e-mail: a pending member, audited; a second invitation is a CONFLICT", async () => {
    const admin = callerFor(db, members.admin, ORG);
    const invited = await admin.member.invite({ email: " New.Person@Acme.example ", role: "operator" });
    expect(invited).toMatchObject({ email: "new.person@acme.example", role: "operator", pending: true });
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "member.invite", targetId: invited.userId },
    });
    expect(audit.after).toMatchObject({ email: "new.person@acme.example", role: "operator" });
    await expect(
      admin.member.invite({ email: "new.person@acme.example", role: "viewer" }),
    ).rejects.toMatchObject({
      code: "CONFLICT",
    });
    await expect(admin.member.invite({ email: "not-an-email", role: "viewer" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });

  it("only an owner grants or changes the owner role", async () => {
    const admin = callerFor(db, members.admin, ORG);
    await expect(admin.member.invite({ email: "x@acme.example", role: "owner" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(
      admin.member.updateRole({ userId: members.viewer.userId, role: "owner" }),
    ).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(
      admin.member.updateRole({ userId: members.owner.userId, role: "viewer" }),
    ).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(admin.member.remove({ userId: members.owner.userId })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });

  it("changes a role (audited with before/after) and the change takes effect on the next call", async () => {
    const target = await addMember(db, ORG, "viewer", "promote-me@acme.example");
    await expect(callerFor(db, target, ORG).enrollment.listTokens({})).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    const updated = await callerFor(db, members.admin, ORG).member.updateRole({
      userId: target.userId,
      role: "operator",
    });
    expect(updated.role).toBe("operator");
    await expect(callerFor(db, target, ORG).enrollment.listTokens({})).resolves.toBeDefined();
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "member.updateRole", targetId: target.userId },
    });
    expect(audit.before).toMatchObject({ role: "viewer" });
    expect(audit.after).toMatchObject({ role: "operator" });
  });

  it("never removes or demotes the last owner", async () => {
    const owner = callerFor(db, members.owner, ORG);
    await expect(
      owner.member.updateRole({ userId: members.owner.userId, role: "admin" }),
    ).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    await expect(owner.member.remove({ userId: members.owner.userId })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    // With a second owner, the first may step down.
    const second = await addMember(db, ORG, "viewer", "second-owner@acme.example");
    await owner.member.updateRole({ userId: second.userId, role: "owner" });
    await expect(
      owner.member.updateRole({ userId: members.owner.userId, role: "admin" }),
    ).resolves.toMatchObject({
      role: "admin",
    });
    await expect(callerFor(db, second, ORG).member.remove({ userId: second.userId })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
  });

  it("removes a member: access ends at once; unknown or foreign members are NOT_FOUND", async () => {
    const leaving = await addMember(db, ORG, "operator", "leaving@acme.example");
    await callerFor(db, members.admin, ORG).member.remove({ userId: leaving.userId });
    await expect(callerFor(db, leaving, ORG).member.list()).rejects.toMatchObject({ code: "NOT_FOUND" });
    const bob = await db.user.findUniqueOrThrow({ where: { email: "bob@globex.example" } });
    await expect(callerFor(db, members.admin, ORG).member.remove({ userId: bob.id })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
