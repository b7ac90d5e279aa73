/**
 * Authorization matrix generated from the router: every procedure × every kind of caller, with the
 * expected answer derived from the procedure's meta (tier, role). A new procedure is covered
 * without touching this file; a mutation without a declared role or audit action fails it.
 *
 * Each call passes an input no procedure accepts, so an authorized caller gets the input error
 * (BAD_REQUEST from zod) and nothing changes, while an unauthorized one is stopped before that.
 */
import type { Db, Role } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { type ApiSession, appRouter, type ProcedureMeta } from "../src";
import { ROLES, roleAtLeast } from "../src/domain/roles";
import { createCallerFactory, createTRPCRouter, organizationProcedure, requiredRole } from "../src/trpc";
import { apiKeysByRole, keyCaller, membersByRole, ORG, OTHER_ORG } from "./actors";
import { callerFor, sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

type Outcome = "allowed" | "UNAUTHORIZED" | "FORBIDDEN" | "NOT_FOUND";

interface ProcedureInfo {
  path: string;
  type: "query" | "mutation" | "subscription";
  meta: ProcedureMeta | undefined;
}

type CallerKind =
  | { kind: "member"; role: Role }
  | { kind: "apiKey"; role: Role }
  | { kind: "otherOrganizationMember" }
  | { kind: "anonymous" };

const CALLER_KINDS: CallerKind[] = [
  ...ROLES.map((role) => ({ kind: "member" as const, role })),
  ...ROLES.map((role) => ({ kind: "apiKey" as const, role })),
  { kind: "otherOrganizationMember" },
  { kind: "anonymous" },
];

function describeCaller(c: CallerKind): string {
  return "role" in c ? `${c.kind}:${c.role}` : c.kind;
}

/** What the rules say this caller must get; throws when the procedure's meta is incomplete. */
export function expectedOutcome(procedure: ProcedureInfo, caller: CallerKind): Outcome {
  const access = procedure.meta?.access;
  if (access === "public") return "allowed";
  if (access === "user") {
    return caller.kind === "member" || caller.kind === "otherOrganizationMember" ? "allowed" : "UNAUTHORIZED";
  }
  if (access !== "organization") throw new Error(`${procedure.path}: no access tier in meta`);
  const needed = requiredRole(procedure.meta, procedure.type);
  if (!needed) throw new Error(`${procedure.path}: a ${procedure.type} must declare meta.role`);
  if (procedure.type === "mutation" && !procedure.meta?.audit) {
    throw new Error(`${procedure.path}: a mutation must declare meta.audit`);
  }
  switch (caller.kind) {
    case "anonymous":
      return "UNAUTHORIZED";
    case "otherOrganizationMember":
      return "NOT_FOUND";
    default:
      return roleAtLeast(caller.role, needed) ? "allowed" : "FORBIDDEN";
  }
}

function proceduresOf(): ProcedureInfo[] {
  return Object.entries(appRouter._def.procedures).map(([path, procedure]) => {
    const def = (procedure as unknown as { _def: { type: ProcedureInfo["type"]; meta?: ProcedureMeta } })
      ._def;
    return { path, type: def.type, meta: def.meta };
  });
}

const INVALID_INPUT = "matrix: not a valid input for any procedure";

async function outcomeOf(call: () => Promise<unknown>): Promise<Outcome | string> {
  try {
    await call();
    return "allowed";
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    if (error.code === "BAD_REQUEST" && error.cause instanceof ZodError) return "allowed";
    return error.code;
  }
}

let testDb: TestDatabase;
let db: Db;
let members: Record<Role, ApiSession>;
let keys: Record<Role, string>;
let outsider: ApiSession;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  members = await membersByRole(db);
  keys = await apiKeysByRole(db, members.owner, ORG);
  outsider = await sessionOf(db, "bob@globex.example");
  await db.auditLog.deleteMany({});
});

afterAll(async () => {
  await testDb?.drop();
});

function callerOf(kind: CallerKind) {
  switch (kind.kind) {
    case "member":
      return callerFor(db, members[kind.role], ORG);
    case "apiKey":
      return keyCaller(db, keys[kind.role]);
    case "otherOrganizationMember":
      return callerFor(db, outsider, ORG);
    case "anonymous":
      return callerFor(db, null, ORG);
  }
}

function invoke(caller: ReturnType<typeof callerOf>, path: string): Promise<unknown> {
  let target: unknown = caller;
  for (const segment of path.split(".")) target = (target as Record<string, unknown>)[segment];
  if (typeof target !== "function") throw new Error(`no procedure at ${path}`);
  return (target as (input: unknown) => Promise<unknown>)(INVALID_INPUT);
}

describe("authorization matrix (generated from appRouter)", () => {
  const procedures = proceduresOf();

  it("covers the router, including the procedures of this issue", () => {
    const paths = procedures.map((p) => p.path);
    for (const path of [
      "apiKey.create",
      "apiKey.revoke",
      "audit.list",
      "member.updateRole",
      "enrollment.createToken",
      // Live pages' subscription: the same role and tenant checks as queries.
      "fleet.changes",
      "fleet.events",
      "node.statusHistory",
      // Apps and versions (issue 10): viewers read, operators write, the upload is authorized here.
      "app.list",
      "app.create",
      "app.update",
      "app.delete",
      "app.deployment",
      "appVersion.create",
      "appVersion.delete",
      "appVersion.uploadTarget",
      // Rollouts (issue 10): viewers read and preview, operators create and act.
      "rollout.preview",
      "rollout.create",
      "rollout.list",
      "rollout.byId",
      "rollout.nodes",
      "rollout.gates",
      // Each site's budget use (issue 11, #4).
      "rollout.siteUplinks",
      "rollout.checkGateQuery",
      "rollout.start",
      "rollout.pause",
      "rollout.resume",
      "rollout.approve",
      "rollout.abort",
      "rollout.rollback",
    ]) {
      expect(paths).toContain(path);
    }
  });

  it.each(procedures.map((p) => [p.path, p] as const))("%s declares a complete meta", (_path, procedure) => {
    for (const caller of CALLER_KINDS) expect(() => expectedOutcome(procedure, caller)).not.toThrow();
  });

  it.each(procedures.map((p) => [p.path, p] as const))(
    "%s answers every caller as its meta says",
    async (_path, procedure) => {
      const actual: Record<string, string> = {};
      const expected: Record<string, string> = {};
      for (const caller of CALLER_KINDS) {
        expected[describeCaller(caller)] = expectedOutcome(procedure, caller);
        actual[describeCaller(caller)] = await outcomeOf(() => invoke(callerOf(caller), procedure.path));
      }
      expect(actual).toEqual(expected);
    },
  );

  it("wrote no audit row: every mutation above was refused or invalid", async () => {
    expect(await db.auditLog.count()).toBe(0);
  });
});

describe("fail closed", () => {
  const t = createTRPCRouter({
    undeclared: organizationProcedure.mutation(() => "done"),
    unaudited: organizationProcedure.meta({ role: "viewer" }).mutation(() => "done"),
  });
  const createTestCaller = createCallerFactory(t);

  it("refuses a mutation without a declared role, even to an owner", async () => {
    const caller = createTestCaller({
      db,
      session: members.owner,
      activeOrganizationSlug: ORG,
      authorization: null,
      agentServerUrl: null,
      agentDownloadUrl: null,
      mimirUrl: null,
      gateway: null,
      fleetChanges: null,
      identityDirectory: null,
      authenticatedKey: null,
      fairShare: null,
      apiLatency: null,
    });
    await expect(caller.undeclared()).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(caller.unaudited()).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("makes the matrix itself fail on such a procedure", () => {
    const info = {
      path: "x.undeclared",
      type: "mutation" as const,
      meta: { access: "organization" as const },
    };
    expect(() => expectedOutcome(info, { kind: "member", role: "owner" })).toThrow(/must declare meta.role/);
    expect(() => expectedOutcome({ ...info, meta: undefined }, { kind: "anonymous" })).toThrow(
      /no access tier/,
    );
  });

  it("sends a member of another organization away with NOT_FOUND, not FORBIDDEN", async () => {
    await expect(callerFor(db, outsider, ORG).audit.list({})).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(callerFor(db, outsider, OTHER_ORG).audit.list({})).resolves.toMatchObject({ items: [] });
  });
});
