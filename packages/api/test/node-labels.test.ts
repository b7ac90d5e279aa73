/** node.bulkUpdateLabels: by selector and by ids, within the tenant only, operator and up. */
import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession } from "../src";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let alice: ApiSession;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  alice = await sessionOf(db, "alice@acme.example");
});

afterAll(async () => {
  await testDb?.drop();
});

const labelsOf = async (slug: string) =>
  Object.fromEntries(
    (await db.node.findMany({ where: { organization: { slug } } })).map((n) => [
      n.name,
      n.labels as Record<string, string>,
    ]),
  );

describe("node.bulkUpdateLabels", () => {
  it("adds and removes labels on the nodes a selector picks, and nowhere else", async () => {
    const before = await labelsOf("acme");
    const globexBefore = await labelsOf("globex");
    const result = await callerFor(db, alice, "acme").node.bulkUpdateLabels({
      target: { selector: "site=plant-7,tier=canary" },
      add: { ring: "zero", tier: "canary-2" },
      remove: ["hw"],
    });
    const after = await labelsOf("acme");
    const picked = Object.keys(before).filter(
      (name) => before[name]?.site === "plant-7" && before[name]?.tier === "canary",
    );
    expect(picked.length).toBeGreaterThan(0);
    expect(result.updated).toBe(picked.length);
    for (const [name, labels] of Object.entries(before)) {
      if (picked.includes(name)) {
        const { hw: _removed, ...rest } = labels;
        expect(after[name]).toEqual({ ...rest, ring: "zero", tier: "canary-2" });
      } else {
        expect(after[name]).toEqual(labels);
      }
    }
    expect(await labelsOf("globex")).toEqual(globexBefore);

    const audit = await db.auditLog.findFirstOrThrow({ where: { action: "node.labels.update" } });
    expect(audit).toMatchObject({
      targetType: "node",
      organizationId: (await db.organization.findUniqueOrThrow({ where: { slug: "acme" } })).id,
    });
    expect(audit.after).toMatchObject({
      target: { selector: "site=plant-7,tier=canary" },
      remove: ["hw"],
      updated: picked.length,
    });
  });

  it("updates a list of ids, ignoring ids of another organization", async () => {
    const acmeNode = await db.node.findFirstOrThrow({ where: { organization: { slug: "acme" } } });
    const globexNode = await db.node.findFirstOrThrow({ where: { organization: { slug: "globex" } } });
    const result = await callerFor(db, alice, "acme").node.bulkUpdateLabels({
      target: { ids: [acmeNode.id, globexNode.id] },
      add: { owner: "alice" },
    });
    expect(result.updated).toBe(1);
    const [acmeAfter, globexAfter] = await Promise.all([
      db.node.findUniqueOrThrow({ where: { id: acmeNode.id } }),
      db.node.findUniqueOrThrow({ where: { id: globexNode.id } }),
    ]);
    expect(acmeAfter.labels).toMatchObject({ owner: "alice" });
    expect(globexAfter.labels).toEqual(globexNode.labels);
  });

  it("refuses a viewer with FORBIDDEN and changes nothing", async () => {
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: "acme" } });
    const viewer = await db.user.create({ data: { email: "val@acme.example" } });
    await db.membership.create({ data: { organizationId: acme.id, userId: viewer.id, role: "viewer" } });
    const before = await labelsOf("acme");
    const session = await sessionOf(db, "val@acme.example");
    await expect(
      callerFor(db, session, "acme").node.bulkUpdateLabels({ target: { selector: "tier" }, add: { x: "y" } }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await labelsOf("acme")).toEqual(before);
  });

  it.each([
    [
      "a bad selector",
      { target: { selector: "tier in (" }, add: { a: "b" } },
      /invalid selector at position 9/,
    ],
    ["nothing to change", { target: { selector: "tier" } }, /nothing to change/],
    ["a bad key", { target: { selector: "tier" }, add: { "bad key": "v" } }, /invalid label key .*bad key/],
    ["a bad value", { target: { selector: "tier" }, add: { k: "a b" } }, /invalid label value .*a b/],
    [
      "add and remove of one key",
      { target: { selector: "tier" }, add: { k: "v" }, remove: ["k"] },
      /both added and removed/,
    ],
    ["an empty id list", { target: { ids: [] }, add: { k: "v" } }, /./],
  ])("rejects %s with BAD_REQUEST", async (_label, input, message) => {
    // biome-ignore lint/suspicious/noExplicitAny: deliberately invalid input, as an untyped client could send
    const call = callerFor(db, alice, "acme").node.bulkUpdateLabels(input as any);
    await expect(call).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(message),
    });
  });
});
