import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { IdentityConflictError, syncUserFromIdentity } from "../src/identity";
import { createMigratedDatabase, type TestDatabase } from "./support/test-database";

let database: TestDatabase;
beforeAll(async () => {
  database = await createMigratedDatabase();
});
afterAll(async () => {
  await database?.drop();
});
beforeEach(async () => {
  await database.db.organization.deleteMany();
  await database.db.user.deleteMany();
});

describe("syncUserFromIdentity", () => {
  it("links a pre-created user by e-mail at first sign-in", async () => {
    const db = database.db;
    const acme = await db.organization.create({ data: { slug: "acme", name: "Acme Energy" } });
    const alice = await db.user.create({ data: { email: "alice@acme.example", name: "Alice" } });
    await db.membership.create({ data: { organizationId: acme.id, userId: alice.id, role: "owner" } });

    const memberships = await syncUserFromIdentity(db, {
      subject: "kc-alice",
      email: "Alice@Acme.Example",
      name: "Alice Anders",
      organizationSlugs: ["acme"],
    });

    expect(memberships).toEqual([
      { organizationId: acme.id, slug: "acme", name: "Acme Energy", role: "owner" },
    ]);
    const linked = await db.user.findUniqueOrThrow({ where: { id: alice.id } });
    expect(linked).toMatchObject({
      keycloakSubject: "kc-alice",
      name: "Alice Anders",
      email: "alice@acme.example",
    });
    expect(await db.user.count()).toBe(1);
  });

  it("creates missing organizations and memberships: first member owner, later ones viewer", async () => {
    const db = database.db;
    const first = await syncUserFromIdentity(db, {
      subject: "kc-1",
      email: "first@new.example",
      organizationSlugs: ["newco", "otherco"],
    });
    expect(first.map((m) => [m.slug, m.name, m.role])).toEqual([
      ["newco", "newco", "owner"],
      ["otherco", "otherco", "owner"],
    ]);
    const second = await syncUserFromIdentity(db, {
      subject: "kc-2",
      email: "second@new.example",
      name: null,
      organizationSlugs: ["newco"],
    });
    expect(second.map((m) => [m.slug, m.role])).toEqual([["newco", "viewer"]]);
    expect(await db.organization.count()).toBe(2);
  });

  it("keeps existing roles and returns only the organizations in the claim", async () => {
    const db = database.db;
    await syncUserFromIdentity(db, { subject: "kc-owner", email: "o@x.example", organizationSlugs: ["x"] });
    await syncUserFromIdentity(db, {
      subject: "kc-op",
      email: "op@x.example",
      organizationSlugs: ["x", "y"],
    });
    const operator = await db.user.findUniqueOrThrow({ where: { keycloakSubject: "kc-op" } });
    const x = await db.organization.findUniqueOrThrow({ where: { slug: "x" } });
    await db.membership.update({
      where: { organizationId_userId: { organizationId: x.id, userId: operator.id } },
      data: { role: "operator" },
    });

    const again = await syncUserFromIdentity(db, {
      subject: "kc-op",
      email: "op@x.example",
      organizationSlugs: ["x"],
    });
    expect(again.map((m) => [m.slug, m.role])).toEqual([["x", "operator"]]);
    // the membership in y is not in the claim, so it is not returned (Keycloak is the source of truth)
    expect(await db.membership.count({ where: { userId: operator.id } })).toBe(2);
    expect(
      await syncUserFromIdentity(db, { subject: "kc-op", email: "op@x.example", organizationSlugs: [] }),
    ).toEqual([]);
  });

  it("follows e-mail and name changes of a known subject", async () => {
    const db = database.db;
    await syncUserFromIdentity(db, {
      subject: "kc-9",
      email: "old@x.example",
      name: "Old",
      organizationSlugs: [],
    });
    await syncUserFromIdentity(db, {
      subject: "kc-9",
      email: "new@x.example",
      name: "New",
      organizationSlugs: [],
    });
    expect(await db.user.findUniqueOrThrow({ where: { keycloakSubject: "kc-9" } })).toMatchObject({
      email: "new@x.example",
      name: "New",
    });
    expect(await db.user.count()).toBe(1);
  });

  it("refuses to take over an e-mail linked to another subject", async () => {
    const db = database.db;
    await syncUserFromIdentity(db, { subject: "kc-a", email: "shared@x.example", organizationSlugs: [] });
    await expect(
      syncUserFromIdentity(db, { subject: "kc-b", email: "shared@x.example", organizationSlugs: ["x"] }),
    ).rejects.toThrow(IdentityConflictError);
    expect(await db.organization.count()).toBe(0); // nothing half-done
  });

  it("gives one owner when the first members of an existing, empty organization sign in at once", async () => {
    const db = database.db;
    await db.organization.create({ data: { slug: "race", name: "Race" } });
    const results = await Promise.all(
      ["p", "q", "r", "s", "t"].map((name) =>
        syncUserFromIdentity(db, {
          subject: `kc-${name}`,
          email: `${name}@race.example`,
          organizationSlugs: ["race"],
        }),
      ),
    );
    const roles = results.map((memberships) => memberships[0]?.role).sort();
    expect(roles).toEqual(["owner", "viewer", "viewer", "viewer", "viewer"]);
  });

  it("rejects malformed identities with a clear error", async () => {
    const db = database.db;
    await expect(
      syncUserFromIdentity(db, { subject: "", email: "a@b.example", organizationSlugs: [] }),
    ).rejects.toThrow(/subject/);
    await expect(
      syncUserFromIdentity(db, { subject: "s", email: "not-an-email", organizationSlugs: [] }),
    ).rejects.toThrow(/e-mail/);
    await expect(
      syncUserFromIdentity(db, { subject: "s", email: "a@b.example", organizationSlugs: ["bad slug!"] }),
    ).rejects.toThrow(/organization alias/);
  });
});
