// `pnpm --filter @edgefleet/db db:migration:create <name>`: writes the SQL that takes the existing
// migrations to prisma/schema.prisma into prisma/migrations/<UTC timestamp>_<name>/migration.sql.
// Needs DATABASE_URL (a server where it may create and drop a temporary shadow database).
// Used instead of `prisma migrate dev`, which fails on this engine after writing the file.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error("usage: db:migration:create <name>   (lower-case letters, digits and _)");
  process.exit(2);
}
const packageDir = join(import.meta.dirname, "..");
let sql: string;
try {
  sql = execFileSync(
    "pnpm",
    [
      "exec",
      "prisma",
      "migrate",
      "diff",
      "--from-migrations",
      "prisma/migrations",
      "--to-schema-datamodel",
      "prisma/schema.prisma",
      "--script",
      "--exit-code",
    ],
    { cwd: packageDir, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
  console.log("schema.prisma matches the migrations; nothing to create");
  process.exit(0);
} catch (error) {
  // --exit-code: 2 means "there is a difference", which is what we want here
  const failure = error as { status?: number; stdout?: string };
  if (failure.status !== 2 || !failure.stdout) throw error;
  sql = failure.stdout;
}
const timestamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
const directory = join(packageDir, "prisma", "migrations", `${timestamp}_${name}`);
mkdirSync(directory, { recursive: true });
writeFileSync(join(directory, "migration.sql"), sql);
console.log(`wrote ${join(directory, "migration.sql")}`);
