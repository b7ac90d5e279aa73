/**
 * The REST API fuzzed from its own OpenAPI document by a third-party schema-driven fuzzer
 * (schemathesis, installed by `./edgefleet install --test`), against the stack's running console
 * (issue 8, #16): no operation answers 5xx, and no body reveals a stack, SQL or a driver message
 * (hooks.py). It runs as the owner of an organization made for the run, so whatever the fuzzer
 * creates or deletes touches nobody else's data (the browser tests share this database).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import { createPrismaClient, type Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller, createTRPCContext } from "../src";

const webUrl = process.env.WEB_URL;
const schemathesis = process.env.SCHEMATHESIS_BIN;
const databaseUrl = process.env.DATABASE_URL;
let db: Db;
let apiKey: string;

beforeAll(async () => {
  if (!webUrl || !schemathesis || !databaseUrl) {
    throw new Error("WEB_URL, SCHEMATHESIS_BIN and DATABASE_URL must be set: run under ./edgefleet test");
  }
  db = createPrismaClient(databaseUrl, { log: ["error"] });
  const slug = `fuzz-${randomBytes(4).toString("hex")}`;
  const organization = await db.organization.create({ data: { slug, name: `Fuzz ${slug}` } });
  const user = await db.user.create({
    data: { email: `${slug}@fuzz.example`, keycloakSubject: `kc-${slug}` },
  });
  await db.membership.create({ data: { organizationId: organization.id, userId: user.id, role: "owner" } });
  const owner = createCaller(
    createTRPCContext({
      db,
      session: {
        userId: user.id,
        email: user.email,
        memberships: [{ organizationId: organization.id, slug, name: organization.name, role: "owner" }],
      },
      activeOrganizationSlug: slug,
    }),
  );
  apiKey = (await owner.apiKey.create({ name: "schemathesis", role: "owner" })).key;
});

afterAll(async () => {
  await db?.$disconnect();
});

describe("REST fuzzed from the OpenAPI document", () => {
  it("answers no 5xx and reveals no internals, for generated valid and invalid requests", async () => {
    // Asynchronous on purpose: a worker blocked for minutes in spawnSync misses vitest's own RPC
    // deadline ("Timeout calling onTaskUpdate"), which fails the run though every test passed.
    const run = await runToCompletion(
      schemathesis ?? "st",
      [
        "run",
        `${webUrl}/api/openapi.json`,
        "--url",
        `${webUrl}/api/v1`,
        "--header",
        `Authorization: Bearer ${apiKey}`,
        "--checks",
        "not_a_server_error,no_internals_in_body",
        "--max-examples",
        "12",
        "--request-timeout",
        "20",
        "--seed",
        "20261125",
        "--no-color",
      ],
      {
        timeout: 600_000,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, SCHEMATHESIS_HOOKS: "hooks", PYTHONPATH: join(import.meta.dirname, "fuzz") },
      },
    );
    const output = `${run.stdout}\n${run.stderr}`;
    // The summary names every failure with a reproducing curl command: keep it in the test output.
    if (run.status !== 0) console.log(output.slice(-20_000));
    expect(run.spawnError).toBeUndefined();
    expect(output).toMatch(/operations? (tested|selected)|API Operations/i);
    expect(run.status, "schemathesis found failures (see its report above)").toBe(0);
  }, 660_000);
});

/** Runs a program to its end, resolving (never rejecting) with its exit status and output. */
async function runToCompletion(
  file: string,
  args: string[],
  options: { timeout: number; maxBuffer: number; env: NodeJS.ProcessEnv },
): Promise<{ status: number | null; stdout: string; stderr: string; spawnError?: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(file, args, { ...options, encoding: "utf8" });
    return { status: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string; message: string };
    // A numeric code is the program's exit status; a string code (ENOENT, ETIMEDOUT…) means it never ran to its end.
    if (typeof failed.code === "number")
      return { status: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
    return {
      status: null,
      stdout: failed.stdout ?? "",
      stderr: failed.stderr ?? "",
      spawnError: failed.message,
    };
  }
}
