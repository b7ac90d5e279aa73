/** node.list at scale semantics: selectors, sorts with keyset cursors, search, and their errors. */
import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiSession, RouterInputs, RouterOutputs } from "../src";
import { matchesSelector, parseSelector } from "../src/domain/selectors";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

type ListInput = RouterInputs["node"]["list"];
type NodeRow = RouterOutputs["node"]["list"]["items"][number];

let testDb: TestDatabase;
let db: Db;
let alice: ApiSession;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  alice = await sessionOf(db, "alice@acme.example");
  // Extra labels so that `in`, exists and not-exists have something to tell apart.
  const acme = await db.node.findMany({
    where: { organization: { slug: "acme" } },
    orderBy: { name: "asc" },
  });
  for (const [i, node] of acme.entries()) {
    const extra = i % 3 === 0 ? { gpu: "yes" } : i % 3 === 1 ? { env: "prod" } : { env: "staging" };
    await db.node.update({
      where: { id: node.id },
      data: { labels: { ...(node.labels as object), ...extra } },
    });
  }
  // A globex node that would match every selector below if tenancy leaked.
  const globex = await db.node.findFirstOrThrow({ where: { organization: { slug: "globex" } } });
  await db.node.update({
    where: { id: globex.id },
    data: { labels: { site: "plant-7", tier: "stable", gpu: "yes", env: "prod" } },
  });
});

afterAll(async () => {
  await testDb?.drop();
});

async function acmeNodes() {
  const rows = await db.node.findMany({ where: { organization: { slug: "acme" } }, include: { site: true } });
  return rows.map((n) => ({ ...n, labels: n.labels as Record<string, string> }));
}

async function listAll(input: Omit<ListInput, "cursor" | "limit">, limit = 7): Promise<NodeRow[]> {
  const caller = callerFor(db, alice, "acme");
  const all: NodeRow[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const page: RouterOutputs["node"]["list"] = await caller.node.list({ ...input, limit, cursor });
    all.push(...page.items);
    cursor = page.nextCursor;
    if (!cursor) return all;
  }
  throw new Error("too many pages");
}

describe("node.list with a selector", () => {
  it.each([
    "site=plant-7,tier!=canary",
    "env in (prod,staging)",
    "env notin (prod)",
    "gpu",
    "!gpu",
    "site in (plant-9),!env",
    "tier==canary,hw=rpi4",
  ])("%s returns exactly the acme nodes whose labels match", async (selector) => {
    const requirements = parseSelector(selector);
    const expected = (await acmeNodes())
      .filter((n) => matchesSelector(requirements, n.labels))
      .map((n) => n.name)
      .sort();
    expect(expected.length).toBeGreaterThan(0);
    const rows = await listAll({ selector });
    expect(rows.map((n) => n.name)).toEqual(expected);
  });

  it("combines selector, status and search", async () => {
    const rows = await listAll({ selector: "tier=stable", status: "online", search: "PLANT-9" });
    const expected = (await acmeNodes())
      .filter((n) => n.labels.tier === "stable" && n.status === "online" && n.site?.name === "plant-9")
      .map((n) => n.name)
      .sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(rows.map((n) => n.name)).toEqual(expected);
  });

  it("answers a bad selector with BAD_REQUEST and the parser's position and message", async () => {
    await expect(callerFor(db, alice, "acme").node.list({ selector: "env in (prod" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: 'invalid selector at position 12: expected "," or ")", found end of input',
    });
  });
});

describe("node.list sorting and cursors", () => {
  const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const statusRank = { pending: 0, online: 1, offline: 2, revoked: 3 } as const;

  it.each([
    ["name", "asc"],
    ["name", "desc"],
    ["status", "asc"],
    ["status", "desc"],
    ["lastSeenAt", "asc"],
    ["lastSeenAt", "desc"],
    ["agentVersion", "asc"],
    ["agentVersion", "desc"],
  ] as const)(
    "pages by %s %s in order, tiebreak by id, without gaps or repeats",
    async (field, direction) => {
      // Distinct agent versions and last-seen times for some nodes, many ties for the rest.
      const nodes = await acmeNodes();
      const rows = await listAll({ sort: { field, direction } }, 5);
      const key = (n: (typeof nodes)[number]) =>
        field === "name"
          ? n.name
          : field === "status"
            ? String(statusRank[n.status])
            : field === "lastSeenAt"
              ? String(n.lastSeenAt?.getTime() ?? -1).padStart(16, "0")
              : (n.agentVersion ?? "");
      const sign = direction === "asc" ? 1 : -1;
      const expected = [...nodes]
        .sort((a, b) => sign * (compareText(key(a), key(b)) || compareText(a.id, b.id)))
        .map((n) => n.name);
      expect(rows.map((n) => n.name)).toEqual(expected);
    },
  );

  it("refuses a cursor made for another sort, and a forged one", async () => {
    const caller = callerFor(db, alice, "acme");
    const first = await caller.node.list({ limit: 2, sort: { field: "status", direction: "asc" } });
    expect(first.nextCursor).not.toBeNull();
    await expect(caller.node.list({ limit: 2, cursor: first.nextCursor })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: "invalid cursor: it belongs to another sort order; start from the first page",
    });
    await expect(caller.node.list({ limit: 2, cursor: "bm90LWEtY3Vyc29y" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: "invalid cursor: not one returned by node.list",
    });
  });
});

describe("node.list search", () => {
  it("treats % and _ literally", async () => {
    expect(await listAll({ search: "%" })).toEqual([]);
    expect(await listAll({ search: "acme_plant" })).toEqual([]);
    expect((await listAll({ search: "acme-plant" })).length).toBeGreaterThan(0);
  });
});
