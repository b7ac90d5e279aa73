/**
 * A mutation and its audit row commit together. The audit write is made to fail (a trigger that
 * refuses audit rows for one action), standing in for the process dying between the two writes:
 * the mutation's own writes must not survive it.
 */
import { type Db, type Role, tenantDb } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { inMutationTransaction } from "../src/mutation-transaction";
import { membersByRole, ORG } from "./actors";
import { callerFor } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let members: Record<Role, ApiSession>;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  members = await membersByRole(db);
  await db.$executeRawUnsafe(`
    CREATE FUNCTION refuse_audit_of_member_invite() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.action = 'member.invite' THEN RAISE EXCEPTION 'audit log unavailable'; END IF;
      RETURN NEW;
    END $$`);
  await db.$executeRawUnsafe(`
    CREATE TRIGGER refuse_audit_of_member_invite BEFORE INSERT ON audit_log
    FOR EACH ROW EXECUTE FUNCTION refuse_audit_of_member_invite()`);
});

afterAll(async () => {
  await testDb?.drop();
});

describe("mutation and audit row in one transaction", () => {
  it("when the audit row cannot be written, the mutation is rolled back", async () => {
    const owner = callerFor(db, members.owner, ORG);
    await expect(owner.member.invite({ email: "lost@acme.example", role: "viewer" })).rejects.toMatchObject({
      code: "INTERNAL_SERVER_ERROR",
    });
    expect(await db.user.findUnique({ where: { email: "lost@acme.example" } })).toBeNull();
    expect(await db.auditLog.count({ where: { action: "member.invite" } })).toBe(0);
  });

  it("a mutation whose handler fails after writing leaves nothing behind", async () => {
    // The last owner cannot be demoted: the domain throws inside its nested transaction.
    const owner = callerFor(db, members.owner, ORG);
    await expect(
      owner.member.updateRole({ userId: members.owner.userId, role: "viewer" }),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
    const alice = await db.membership.findFirstOrThrow({ where: { userId: members.owner.userId } });
    expect(alice.role).toBe("owner");
  });

  it("nested transactions join as savepoints: an inner failure undoes only the inner writes", async () => {
    const organization = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    await inMutationTransaction(db, async (tx) => {
      await tx.site.create({ data: { organizationId: organization.id, name: "outer-site" } });
      await expect(
        tx.$transaction(async (inner) => {
          await inner.site.create({ data: { organizationId: organization.id, name: "inner-site" } });
          throw new Error("inner fails");
        }),
      ).rejects.toThrow("inner fails");
      await tx.$transaction([
        tx.site.create({ data: { organizationId: organization.id, name: "batch-site" } }),
      ]);
    });
    const names = (await db.site.findMany({ where: { name: { endsWith: "-site" } } })).map((s) => s.name);
    expect(names.sort()).toEqual(["batch-site", "outer-site"]);
  });

  it("a tenant-scoped client made inside the transaction writes in it", async () => {
    const organization = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    await expect(
      inMutationTransaction(db, async (tx) => {
        // tenantDb sets organizationId itself; the type still asks for it.
        await tenantDb(tx, organization.id).site.create({
          data: { organizationId: organization.id, name: "rolled-back-site" },
        });
        expect(await tx.site.count({ where: { name: "rolled-back-site" } })).toBe(1);
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(await db.site.count({ where: { name: "rolled-back-site" } })).toBe(0);
  });
});
