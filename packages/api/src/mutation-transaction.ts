/**
 * One database transaction per mutation, so a mutation and its audit row commit together (or not
 * at all): if the process dies between the two writes, Postgres rolls both back.
 *
 * Handlers and domain functions keep receiving a plain `Db`: the client handed to them is the
 * transaction's, and two things a Prisma transaction client lacks are added back so existing code
 * runs unchanged inside it:
 * - `$transaction(fn | [queries])` joins the outer transaction as a SAVEPOINT, so a nested block
 *   that throws still rolls back its own writes (its isolation-level option cannot apply and is
 *   ignored: the outer transaction's level holds);
 * - `$extends(extension)` (how `tenantDb` scopes a client) returns the extended client bound to the
 *   same transaction.
 * Prisma has no public API for the second; it uses the client's `_createItxClient` and the
 * registered `prisma.client.transaction.id` symbol (Prisma 6.19). test/audit-transaction.test.ts
 * fails if a Prisma upgrade changes them.
 */
import type { Db } from "@edgefleet/db";

/** A mutation may run long (a label change over 100,000 nodes) and wait for a pool connection. */
export const MUTATION_TRANSACTION_OPTIONS = { maxWait: 15_000, timeout: 120_000 } as const;

const TRANSACTION_ID = Symbol.for("prisma.client.transaction.id");

/** The parts of Prisma's internals this file relies on. */
interface PrismaInternals {
  _createItxClient(transaction: { kind: "itx"; id: unknown; payload: undefined }): unknown;
}

/** Runs `work` in one transaction; it commits when `work` resolves and rolls back when it throws. */
export function inMutationTransaction<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.$transaction(async (itx) => {
    const id = (itx as unknown as Record<symbol, unknown>)[TRANSACTION_ID];
    if (
      id === undefined ||
      typeof (db as unknown as Partial<PrismaInternals>)._createItxClient !== "function"
    ) {
      throw new Error("this Prisma version's transaction client is not supported by mutation-transaction.ts");
    }
    const shared = { id, savepoints: 0, raw: itx as unknown as Db };
    return work(joinable(itx, db, shared));
  }, MUTATION_TRANSACTION_OPTIONS);
}

interface SharedTransaction {
  id: unknown;
  savepoints: number;
  /** The unextended transaction client: raw SQL (savepoints) goes through it, past any tenant scope. */
  raw: Db;
}

/** `itx` is `client`'s transaction client; the result also offers `$transaction` and `$extends`. */
function joinable(itx: unknown, client: Db, shared: SharedTransaction): Db {
  const target = itx as Record<PropertyKey, unknown>;
  const proxy: Db = new Proxy(target, {
    get(object, property) {
      if (property === "$transaction") return nested;
      if (property === "$extends") return extend;
      return object[property];
    },
  }) as unknown as Db;

  function extend(extension: Parameters<Db["$extends"]>[0]) {
    const extended = client.$extends(extension) as unknown as Db;
    const bound = (extended as unknown as PrismaInternals)._createItxClient({
      kind: "itx",
      id: shared.id,
      payload: undefined,
    });
    return joinable(bound, extended, shared);
  }

  async function nested(work: unknown): Promise<unknown> {
    const savepoint = `edgefleet_nested_${++shared.savepoints}`;
    await shared.raw.$executeRawUnsafe(`SAVEPOINT ${savepoint}`);
    try {
      let result: unknown;
      if (typeof work === "function") {
        result = await (work as (tx: Db) => Promise<unknown>)(proxy);
      } else {
        const results: unknown[] = [];
        for (const query of work as Array<Promise<unknown>>) results.push(await query);
        result = results;
      }
      await shared.raw.$executeRawUnsafe(`RELEASE SAVEPOINT ${savepoint}`);
      return result;
    } catch (error) {
      await shared.raw.$executeRawUnsafe(`ROLLBACK TO SAVEPOINT ${savepoint}`);
      throw error;
    }
  }

  return proxy;
}
