import { PrismaPg } from "@prisma/adapter-pg-migrate";
import type { PoolConfig } from "pg";

/**
 * The pg adapter the Prisma CLI migrates through. adapter-pg 7.x, because 6.19.3 cannot read
 * `name` columns during migrate. Two defects of 7.10 are worked around here; this module is
 * loaded only by the Prisma CLI (prisma.config.ts), never by application code.
 *
 * 1. Schema introspection (`migrate diff --from-migrations`, `migrate dev`) reads catalog columns
 *    of Postgres' internal one-byte type "char" (OID 18), which the adapter does not map, so the
 *    engine fails with "Column type 'char' could not be deserialized". We report them as text.
 * 2. Its shadow database clean-up drops the database before closing the pool connected to it, so
 *    the DROP fails ("being accessed by other users") and a prisma_migrate_shadow_db_* is left
 *    behind. We close the pool first.
 */
export class MigrateAdapterFactory extends PrismaPg {
  constructor(private readonly poolConfig: PoolConfig) {
    super(poolConfig);
  }

  override async connect() {
    const adapter = await super.connect();
    reportInternalCharAsText(adapter);
    return adapter;
  }

  override async connectToShadowDb() {
    const adapter = await super.connectToShadowDb();
    const shadowPool = adapter.underlyingDriver();
    const shadowDatabase = shadowPool.options.database;
    adapter.dispose = async () => {
      await shadowPool.end();
      const admin = await new PrismaPg(this.poolConfig).connect();
      try {
        await admin.executeScript(`DROP DATABASE IF EXISTS "${shadowDatabase}"`);
      } finally {
        await admin.dispose();
      }
    };
    return adapter;
  }
}

const PG_INTERNAL_CHAR_OID = 18;
const PG_TEXT_OID = 25;
const patchedPrototypes = new WeakSet<object>();

interface FieldsResult {
  fields?: Array<{ dataTypeID: number }>;
}
/** One result, or one per statement when a script runs several. */
type PerformIO = (this: unknown, ...args: unknown[]) => Promise<FieldsResult | FieldsResult[]>;

/** Patches the shared queryable prototype (covers the adapter and its transactions). */
function reportInternalCharAsText(adapter: object): void {
  let prototype = Object.getPrototypeOf(adapter) as Record<string, unknown> | null;
  while (prototype && !Object.hasOwn(prototype, "performIO")) prototype = Object.getPrototypeOf(prototype);
  if (!prototype || patchedPrototypes.has(prototype)) return;
  patchedPrototypes.add(prototype);
  const performIO = prototype.performIO as PerformIO;
  prototype.performIO = async function (this: unknown, ...args: unknown[]) {
    const result = await performIO.apply(this, args);
    for (const statementResult of Array.isArray(result) ? result : [result]) {
      for (const field of statementResult.fields ?? []) {
        if (field.dataTypeID === PG_INTERNAL_CHAR_OID) field.dataTypeID = PG_TEXT_OID;
      }
    }
    return result;
  };
}
