/**
 * The inputs an attack on the running product turned into HTTP 500s with raw Prisma/Postgres
 * messages, an unauthenticated large body that was read before the key was checked, and methods
 * the OpenAPI document does not declare (issue 8, #6, #7, #9, #11). Through the REST handler the
 * Next route calls, against a real Postgres.
 */
import type { Db } from "@edgefleet/db";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { handleRestRequest, MAX_REQUEST_BODY_BYTES, REST_BASE_PATH, refuseCrossSiteMutation } from "../src";
import { apiKeysByRole, ORG } from "./actors";
import { sessionOf } from "./callers";
import { createTestDatabase, type TestDatabase } from "./test-database";

const ORIGIN = "http://edgefleet.test";
let testDb: TestDatabase;
let db: Db;
let key: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  key = (await apiKeysByRole(db, await sessionOf(db, "alice@acme.example"), ORG)).owner;
});
afterAll(async () => {
  await testDb?.drop();
});

function rest(
  method: string,
  path: string,
  opts: {
    key?: string | null;
    body?: RequestInit["body"];
    query?: Record<string, string>;
    headers?: Record<string, string>;
  } = {},
) {
  const url = new URL(`${ORIGIN}${REST_BASE_PATH}`);
  url.pathname += path;
  for (const [name, value] of Object.entries(opts.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = { ...opts.headers };
  const bearer = opts.key === undefined ? key : opts.key;
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (opts.body !== undefined) headers["content-type"] ??= "application/json";
  return handleRestRequest(
    new Request(url, { method, headers, body: opts.body ?? null, ...(opts.body ? { duplex: "half" } : {}) }),
    { db },
  );
}

/** A client error that names what was wrong and leaks nothing of the server. */
async function expectClientError(response: Response, status: number, field?: string) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(text).not.toMatch(/prisma|postgres|driver|invalid byte sequence|\bat .+\(|node_modules|P20\d\d/i);
  const body = JSON.parse(text) as { code: string; message: string; issues?: Array<{ path: unknown[] }> };
  expect(body.message.length).toBeGreaterThan(0);
  if (field) expect(body.issues?.map((issue) => issue.path.join("."))).toContain(field);
  return body;
}

const json = (value: unknown) => JSON.stringify(value);

describe("input errors are 400 naming the field, never 500 (#6)", () => {
  it("refuses NUL in search, selector, names and filters", async () => {
    const sites = await db.site.count();
    await expectClientError(
      await rest("POST", "/nodes/search", { body: json({ search: "edge\u0000" }) }),
      400,
      "search",
    );
    await expectClientError(
      await rest("POST", "/nodes/search", { body: json({ selector: "site=a\u0000" }) }),
      400,
      "selector",
    );
    await expectClientError(
      await rest("POST", "/sites", { body: json({ name: "plant\u0000" }) }),
      400,
      "name",
    );
    await expectClientError(
      await rest("GET", "/audit", { query: { action: "site.create\u0000" } }),
      400,
      "action",
    );
    expect(await db.site.count()).toBe(sites);
  });

  it("refuses forged node cursors, out-of-range event cursors and dates past Postgres's range", async () => {
    const forged = Buffer.from(
      json({ f: "lastSeenAt", d: "desc", v: "not a time", id: "0190a0a0-0000-7000-8000-000000000000" }),
    ).toString("base64url");
    await expectClientError(
      await rest("POST", "/nodes/search", {
        body: json({ cursor: forged, sort: { field: "lastSeenAt", direction: "desc" } }),
      }),
      400,
    );
    await expectClientError(
      await rest("GET", "/fleet/events", { query: { cursor: "9999999999999999999" } }),
      400,
    );
    await expectClientError(
      await rest("GET", "/audit", { query: { from: "+275760-09-13T00:00:00.000Z" } }),
      400,
    );
  });

  it("refuses a path that is not valid percent-encoded UTF-8", async () => {
    await expectClientError(await rest("GET", "/nodes/%FF%FE"), 400, "path");
  });

  it("answers an unexpected failure with a generic 500 whose reference is in the log", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const scratch = await createTestDatabase();
    try {
      const scratchKey = (
        await apiKeysByRole(scratch.db, await sessionOf(scratch.db, "alice@acme.example"), ORG)
      ).viewer;
      // A real database failure that is not the input's fault: the table is gone.
      await scratch.db.$executeRawUnsafe("DROP TABLE node_status_event CASCADE");
      const response = await handleRestRequest(
        new Request(`${ORIGIN}${REST_BASE_PATH}/fleet/events`, {
          headers: { authorization: `Bearer ${scratchKey}` },
        }),
        { db: scratch.db },
      );
      const text = await response.text();
      expect(response.status).toBe(500);
      expect(text).not.toMatch(/prisma|postgres|node_status_event|relation|stack/i);
      const reference = /reference ([0-9a-f-]{36})/.exec(text)?.[1];
      expect(reference).toBeDefined();
      const logLines = logged.mock.calls.map((call) => String(call[0]));
      expect(
        logLines.some((line) => line.includes(reference ?? "none") && /node_status_event/.test(line)),
      ).toBe(true);
    } finally {
      logged.mockRestore();
      await scratch.drop();
    }
  });
});

describe("authenticate first, cap bodies (#7)", () => {
  it("answers 401 to a large invalid body without a key, without reading it", async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024));
        if (pulled >= 8 * 1024 * 1024) controller.close();
      },
    });
    await expectClientError(await rest("POST", "/sites", { key: null, body: endless }), 401);
    // A stream pulls a chunk or two ahead at most; the 8 MiB were never read.
    expect(pulled).toBeLessThan(1024 * 1024);
  });

  it("answers 413 to a body past the cap, declared or streamed", async () => {
    const big = `{"name":"${"x".repeat(MAX_REQUEST_BODY_BYTES)}"}`;
    await expectClientError(await rest("POST", "/sites", { body: big }), 413, "body");
    const chunks = 20;
    const streamed = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < chunks; i++) controller.enqueue(new Uint8Array(MAX_REQUEST_BODY_BYTES / 8));
        controller.close();
      },
    });
    await expectClientError(await rest("POST", "/sites", { body: streamed }), 413, "body");
    expect(await db.site.count({ where: { name: { startsWith: "xxx" } } })).toBe(0);
  });
});

describe("the server answers only what the document describes (#11)", () => {
  it("answers 405 with Allow for undeclared methods and 404 for unknown paths", async () => {
    // (TRACE cannot even be built as a fetch Request; Next.js refuses it before our handler.)
    for (const method of ["PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]) {
      const response = await rest(method, "/sites");
      expect(response.status, method).toBe(405);
      expect(response.headers.get("allow")).toBe("GET, POST");
    }
    expect((await rest("GET", "/no-such-thing")).status).toBe(404);
  });
});

describe("CSRF (#9)", () => {
  const console = ["http://127.0.0.1:3000"];
  const post = (headers: Record<string, string>, body: RequestInit["body"] = "{}") =>
    new Request("http://127.0.0.1:3000/api/trpc/enrollment.createToken", { method: "POST", headers, body });

  it("refuses a cross-origin form post with the session cookie", async () => {
    const form = new FormData();
    form.set("description", "csrf");
    const crossSite = new Request("http://127.0.0.1:3000/api/trpc/enrollment.createToken", {
      method: "POST",
      headers: { origin: "https://evil.example", cookie: "authjs.session-token=x" },
      body: form,
    });
    expect(refuseCrossSiteMutation(crossSite, console)?.status).toBe(403);
    // Same origin but not JSON (a form without an Origin header, as old browsers send it).
    expect(
      refuseCrossSiteMutation(post({ "content-type": "multipart/form-data; boundary=x" }), console)?.status,
    ).toBe(415);
    expect(refuseCrossSiteMutation(post({ "content-type": "text/plain" }), console)?.status).toBe(415);
    expect(
      refuseCrossSiteMutation(
        post({ "content-type": "application/json", "sec-fetch-site": "cross-site" }),
        console,
      )?.status,
    ).toBe(403);
  });

  it("lets the console's own JSON mutations and every query through", () => {
    expect(
      refuseCrossSiteMutation(
        post({ "content-type": "application/json", origin: "http://127.0.0.1:3000" }),
        console,
      ),
    ).toBeNull();
    expect(
      refuseCrossSiteMutation(new Request("http://127.0.0.1:3000/api/trpc/node.list"), console),
    ).toBeNull();
  });
});
