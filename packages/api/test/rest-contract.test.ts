/**
 * Contract test of the OpenAPI document against the REST handler (the function the Next route
 * calls, given real `Request`s): every documented operation is called, and its answers, success
 * and errors alike, are validated against the schemas the document declares (JSON Schema 2020-12,
 * as OpenAPI 3.1 uses). A documented operation the test does not know how to call fails the test,
 * unless it is a GET without path parameters, which is called as is.
 */
import type { Db } from "@edgefleet/db";
import { Ajv2020 } from "ajv/dist/2020";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenApiDocument, handleRestRequest, REST_BASE_PATH } from "../src";
import { apiKeysByRole, ORG } from "./actors";
import { callerFor, sessionOf } from "./callers";
import { type GatewayStandIn, startGatewayStandIn } from "./gateway-stand-in";
import { agentsRun, labelledNodes, readyApp, settle } from "./rollout-fixtures";
import { createTestDatabase, type TestDatabase } from "./test-database";

const ORIGIN = "http://edgefleet.test";
const document = createOpenApiDocument(ORIGIN);
type Operation = {
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  parameters?: unknown[];
};

let testDb: TestDatabase;
let db: Db;
let keys: Awaited<ReturnType<typeof apiKeysByRole>>;
const ids: Record<string, string> = {};
let gateway: GatewayStandIn;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  const alice = await sessionOf(db, "alice@acme.example");
  keys = await apiKeysByRole(db, alice, ORG);
  const owner = callerFor(db, alice, ORG);
  const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
  ids.pendingNode = (
    await db.node.create({ data: { organizationId: acme.id, name: "acme-rest-pending", status: "pending" } })
  ).id;
  ids.onlineNode = (
    await db.node.findFirstOrThrow({ where: { organizationId: acme.id, status: "online" } })
  ).id;
  ids.token = (await owner.enrollment.createToken({ description: "for REST revoke" })).id;
  ids.apiKey = (await owner.apiKey.create({ name: "for REST revoke", role: "viewer" })).id;
  ids.invitee = (await owner.member.invite({ email: "rest-invitee@acme.example", role: "viewer" })).userId;
  ids.site = (await owner.site.create({ name: "rest-site" })).id;
  ids.emptySite = (await owner.site.create({ name: "rest-site-to-delete" })).id;
  ids.app = (await owner.app.create({ name: "rest-app" })).id;
  ids.appToDelete = (await owner.app.create({ name: "rest-app-to-delete" })).id;
  const version = (label: string) =>
    owner.appVersion.create({
      appId: ids.app as string,
      version: label,
      runSpec: { command: ["./rest-app"] },
      artifact: { source: "upload" },
    });
  ids.version = (await version("1.0.0")).id;
  ids.versionToDelete = (await version("0.9.0")).id;
  const policy = (name: string) =>
    owner.alert.createPolicy({ name, severity: "warning", spec: { kind: "node_offline", forMinutes: 5 } });
  ids.alertPolicy = (await policy("rest-policy")).id;
  ids.alertPolicyToDelete = (await policy("rest-policy-to-delete")).id;
  const channel = (name: string) =>
    owner.alert.createChannel({ kind: "webhook", name, target: "https://hooks.example.com/rest" });
  ids.alertChannel = (await channel("rest-channel")).id;
  ids.alertChannelToDelete = (await channel("rest-channel-to-delete")).id;
  ids.silenceToExpire = (await owner.alert.createSilence({ siteId: ids.site, durationMinutes: 30 })).id;
  ids.uploadVersion = (await version("1.1.0")).id;
  // Rollouts: one app with a ready version, and nodes labelled per rollout (targets never overlap).
  const rolloutApp = await readyApp(db, acme.id, "rest-rollout-app", ["1.0.0"]);
  ids.rolloutVersion = rolloutApp.versions["1.0.0"] as string;
  for (const name of ["create", "start", "pause", "resume", "approve", "abort", "rollback"]) {
    await labelledNodes(db, acme.id, `rest-ro-${name}`, 2, { "rest-rollout": name });
  }
  const rolloutOf = async (name: string) =>
    (
      await owner.rollout.create({
        appVersionId: ids.rolloutVersion as string,
        target: { selector: `rest-rollout=${name}` },
        strategy: { batches: [{ count: 1, pauseAfter: "approval" }] },
      })
    ).id;
  for (const name of ["start", "pause", "resume", "approve", "abort", "rollback"])
    ids[`rollout-${name}`] = await rolloutOf(name);
  for (const name of ["pause", "resume", "approve", "rollback"])
    await owner.rollout.start({ id: ids[`rollout-${name}`] as string });
  await owner.rollout.pause({ id: ids["rollout-resume"] as string });
  await owner.rollout.abort({ id: ids["rollout-rollback"] as string });
  await settle(db, ids["rollout-approve"] as string);
  await agentsRun(db, rolloutApp.appId, ids.rolloutVersion);
  await settle(db, ids["rollout-approve"] as string);
  gateway = await startGatewayStandIn();
});

afterAll(async () => {
  await gateway?.close();
  await testDb?.drop();
});

function rest(
  method: string,
  path: string,
  opts: { key?: string | null; body?: unknown; query?: Record<string, string> } = {},
) {
  const url = new URL(`${ORIGIN}${REST_BASE_PATH}${path}`);
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
  const headers: Record<string, string> = {};
  const key = opts.key === undefined ? keys.owner : opts.key;
  if (key) headers.authorization = `Bearer ${key}`;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  return handleRestRequest(
    new Request(url, { method, headers, body: opts.body === undefined ? null : JSON.stringify(opts.body) }),
    { db, gateway: gateway.connection, mimirUrl: process.env.MIMIR_URL ?? null },
  );
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
function validatorFor(operation: Operation, status: number, contentType = "application/json") {
  const schema = operation.responses?.[String(status)]?.content?.[contentType]?.schema;
  if (!schema) throw new Error(`no documented ${status} ${contentType} response`);
  // The error schemas are $refs into components: compile each with the components beside it.
  return ajv.compile({ ...(schema as object), components: document.components });
}

async function expectDocumented(operation: Operation, response: Response, status: number) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  const body = JSON.parse(text);
  const validate = validatorFor(operation, status);
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  return body;
}

/** How to call each operation successfully; the key is "METHOD /path" as documented. */
const calls: Record<string, () => { path: string; body?: unknown; query?: Record<string, string> }> = {
  "GET /alert-policies": () => ({ path: "/alert-policies" }),
  "POST /alert-policies": () => ({
    path: "/alert-policies",
    body: {
      name: "made over REST",
      severity: "critical",
      spec: { kind: "cpu_above", thresholdPercent: 90, forMinutes: 5 },
    },
  }),
  "GET /alert-policies/{id}": () => ({ path: `/alert-policies/${ids.alertPolicy}` }),
  "PATCH /alert-policies/{id}": () => ({
    path: `/alert-policies/${ids.alertPolicy}`,
    body: { enabled: false },
  }),
  "DELETE /alert-policies/{id}": () => ({ path: `/alert-policies/${ids.alertPolicyToDelete}` }),
  "GET /alerting/status": () => ({ path: "/alerting/status" }),
  "GET /alert-channels": () => ({ path: "/alert-channels" }),
  "POST /alert-channels": () => ({
    path: "/alert-channels",
    body: { kind: "email", name: "made over REST", target: "ops@acme.example" },
  }),
  "PATCH /alert-channels/{id}": () => ({
    path: `/alert-channels/${ids.alertChannel}`,
    body: { minSeverity: "critical" },
  }),
  "POST /alert-channels/{id}/rotate-secret": () => ({
    path: `/alert-channels/${ids.alertChannel}/rotate-secret`,
    body: {},
  }),
  "DELETE /alert-channels/{id}": () => ({ path: `/alert-channels/${ids.alertChannelToDelete}` }),
  "POST /alert-silences": () => ({
    path: "/alert-silences",
    body: { nodeId: ids.onlineNode, durationMinutes: 15, comment: "made over REST" },
  }),
  "DELETE /alert-silences/{id}": () => ({ path: `/alert-silences/${ids.silenceToExpire}` }),
  "PUT /alert-quiet-hours/{siteId}": () => ({
    path: `/alert-quiet-hours/${ids.site}`,
    body: { quietHours: { start: "22:00", end: "06:00" } },
  }),
  "GET /alert-deliveries": () => ({ path: "/alert-deliveries", query: { limit: "5" } }),
  "GET /audit": () => ({ path: "/audit", query: { limit: "2" } }),
  "GET /enrollment-tokens": () => ({ path: "/enrollment-tokens", query: { limit: "5" } }),
  "POST /enrollment-tokens": () => ({
    path: "/enrollment-tokens",
    body: { maxUses: 2, labels: { site: "plant-7" } },
  }),
  "GET /enrollment-tokens/{id}": () => ({ path: `/enrollment-tokens/${ids.token}` }),
  "POST /enrollment-tokens/{id}/revoke": () => ({ path: `/enrollment-tokens/${ids.token}/revoke`, body: {} }),
  "POST /api-keys": () => ({ path: "/api-keys", body: { name: "made over REST", role: "operator" } }),
  "GET /api-keys/{id}": () => ({ path: `/api-keys/${ids.apiKey}` }),
  "POST /api-keys/{id}/revoke": () => ({ path: `/api-keys/${ids.apiKey}/revoke`, body: {} }),
  "POST /members": () => ({ path: "/members", body: { email: "rest-new@acme.example", role: "viewer" } }),
  "GET /members/{userId}": () => ({ path: `/members/${ids.invitee}` }),
  "POST /members/{userId}/role": () => ({ path: `/members/${ids.invitee}/role`, body: { role: "operator" } }),
  "DELETE /members/{userId}": () => ({ path: `/members/${ids.invitee}` }),
  "POST /nodes/search": () => ({
    path: "/nodes/search",
    body: { limit: 5, selector: "tier=canary", status: "online" },
  }),
  "GET /nodes/{id}": () => ({ path: `/nodes/${ids.onlineNode}` }),
  "GET /nodes/{nodeId}/status-history": () => ({
    path: `/nodes/${ids.onlineNode}/status-history`,
    query: { limit: "5" },
  }),
  "POST /nodes/labels": () => ({
    path: "/nodes/labels",
    body: { target: { selector: "tier=canary" }, add: { "set-over": "rest" } },
  }),
  "POST /nodes/commands": () => ({
    path: "/nodes/commands",
    body: { nodeIds: [ids.onlineNode], command: "restart", app: "vision" },
  }),
  "POST /nodes/{id}/commands": () => ({
    path: `/nodes/${ids.onlineNode}/commands`,
    body: { command: "report" },
  }),
  "POST /nodes/{id}/probes": () => ({ path: `/nodes/${ids.onlineNode}/probes`, body: { target: "leaf" } }),
  "POST /nodes/{id}/site": () => ({ path: `/nodes/${ids.pendingNode}/site`, body: { siteId: ids.site } }),
  "GET /nodes/{id}/probes": () => ({ path: `/nodes/${ids.onlineNode}/probes`, query: { limit: "5" } }),
  "GET /sites/{id}/probes": () => ({ path: `/sites/${ids.site}/probes` }),
  "POST /nodes/{nodeId}/approve": () => ({ path: `/nodes/${ids.pendingNode}/approve`, body: {} }),
  "POST /nodes/{nodeId}/revoke": () => ({ path: `/nodes/${ids.onlineNode}/revoke`, body: {} }),
  "POST /sites": () => ({ path: "/sites", body: { name: "made-over-rest", description: "REST" } }),
  "GET /sites/{id}": () => ({ path: `/sites/${ids.site}` }),
  "PATCH /sites/{id}": () => ({ path: `/sites/${ids.site}`, body: { description: "patched" } }),
  "DELETE /sites/{id}": () => ({ path: `/sites/${ids.emptySite}` }),
  "POST /sites/{id}/leaf-bundle": () => ({ path: `/sites/${ids.site}/leaf-bundle`, body: {} }),
  "POST /apps": () => ({ path: "/apps", body: { name: "made-over-rest", description: "REST" } }),
  "GET /apps/{id}": () => ({ path: `/apps/${ids.app}` }),
  "PATCH /apps/{id}": () => ({ path: `/apps/${ids.app}`, body: { description: "patched" } }),
  "DELETE /apps/{id}": () => ({ path: `/apps/${ids.appToDelete}` }),
  "GET /apps/{id}/deployment": () => ({ path: `/apps/${ids.app}/deployment` }),
  "GET /apps/{appId}/versions": () => ({ path: `/apps/${ids.app}/versions`, query: { limit: "1" } }),
  "POST /apps/{appId}/versions": () => ({
    path: `/apps/${ids.app}/versions`,
    body: {
      version: "2.0.0",
      runSpec: { command: ["./rest-app", "--v2"], env: { MODE: "rest" } },
      artifact: { source: "url", url: "https://downloads.example.com/rest-app-2.0.0.tar.gz" },
    },
  }),
  "GET /apps/{appId}/versions/{id}": () => ({ path: `/apps/${ids.app}/versions/${ids.version}` }),
  "DELETE /apps/{appId}/versions/{id}": () => ({ path: `/apps/${ids.app}/versions/${ids.versionToDelete}` }),
  "POST /rollouts/preview": () => ({ path: "/rollouts/preview", body: rolloutBody("create") }),
  "POST /rollouts": () => ({ path: "/rollouts", body: rolloutBody("create") }),
  "GET /rollouts": () => ({ path: "/rollouts", query: { limit: "2" } }),
  "GET /rollouts/{id}": () => ({ path: `/rollouts/${ids["rollout-approve"]}` }),
  "GET /rollouts/{id}/nodes": () => ({
    path: `/rollouts/${ids["rollout-approve"]}/nodes`,
    query: { batch: "0", limit: "10" },
  }),
  "GET /rollouts/{id}/gates": () => ({ path: `/rollouts/${ids["rollout-approve"]}/gates` }),
  "GET /rollouts/{id}/site-uplinks": () => ({ path: `/rollouts/${ids["rollout-approve"]}/site-uplinks` }),
  "POST /rollouts/gate-queries/check": () => ({
    path: "/rollouts/gate-queries/check",
    body: { promql: "sum by (node) (edgefleet_node_cpu_usage_ratio)", windowSeconds: 60 },
  }),
  "POST /rollouts/{id}/start": () => ({ path: `/rollouts/${ids["rollout-start"]}/start`, body: {} }),
  "POST /rollouts/{id}/pause": () => ({
    path: `/rollouts/${ids["rollout-pause"]}/pause`,
    body: { note: "REST" },
  }),
  "POST /rollouts/{id}/resume": () => ({ path: `/rollouts/${ids["rollout-resume"]}/resume`, body: {} }),
  "POST /rollouts/{id}/approve": () => ({ path: `/rollouts/${ids["rollout-approve"]}/approve`, body: {} }),
  "POST /rollouts/{id}/abort": () => ({ path: `/rollouts/${ids["rollout-abort"]}/abort`, body: {} }),
  "POST /rollouts/{id}/rollback": () => ({ path: `/rollouts/${ids["rollout-rollback"]}/rollback`, body: {} }),
};

function rolloutBody(name: string) {
  return {
    appVersionId: ids.rolloutVersion,
    target: { selector: `rest-rollout=${name}` },
    strategy: { batches: [{ percent: 50 }] },
  };
}

const SPECIAL = new Set(["GET /audit/export", "PUT /apps/{appId}/versions/{versionId}/artifact"]);
const METHODS = ["get", "post", "put", "patch", "delete"] as const;

const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
  METHODS.filter((m) => (item as Record<string, unknown>)[m]).map((method) => ({
    id: `${method.toUpperCase()} ${path}`,
    method: method.toUpperCase(),
    path,
    operation: (item as Record<string, Operation>)[method] as Operation,
  })),
);

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1 with the procedures of this issue, bearer auth and a server under /api/v1", () => {
    expect(document.openapi).toBe("3.1.0");
    expect(document.servers?.[0]?.url).toBe(`${ORIGIN}${REST_BASE_PATH}`);
    const documented = operations.map((o) => o.id);
    for (const id of Object.keys(calls)) expect(documented).toContain(id);
    expect(documented).toContain("GET /audit/export");
    expect(documented).toContain("PUT /apps/{appId}/versions/{versionId}/artifact");
  });
});

describe("every documented operation answers with its documented shape", () => {
  // Order matters (the invitee is promoted, then removed): run in document order, sequentially.
  it.each(operations.filter((o) => !SPECIAL.has(o.id)).map((o) => [o.id, o] as const))(
    "%s",
    async (id, op) => {
      const known = calls[id];
      if (!known && (op.method !== "GET" || op.path.includes("{"))) {
        throw new Error(
          `${id} is documented but this contract test does not know how to call it: add it to \`calls\``,
        );
      }
      const call = known ? known() : { path: op.path };
      const response = await rest(op.method, call.path, { body: call.body, query: call.query });
      await expectDocumented(op.operation, response, 200);

      // Without a key: 401 in the documented error shape.
      const anonymous = await rest(op.method, call.path, { key: null, body: call.body, query: call.query });
      await expectDocumented(op.operation, anonymous, 401);
    },
  );
});

describe("errors, auth and pagination over REST", () => {
  const operationOf = (id: string) => {
    const found = operations.find((o) => o.id === id);
    if (!found) throw new Error(`${id} not documented`);
    return found.operation;
  };

  it("invalid input: 400 with zod issues pointing at the field", async () => {
    const body = await expectDocumented(
      operationOf("POST /api-keys"),
      await rest("POST", "/api-keys", { body: { name: "", role: "god" } }),
      400,
    );
    expect(body.code).toBe("BAD_REQUEST");
    expect(body.issues.map((i: { path: string[] }) => i.path[0]).sort()).toEqual(["name", "role"]);
  });

  it("a viewer key on an admin operation: 403; a revoked key: 401", async () => {
    const forbidden = await expectDocumented(
      operationOf("GET /api-keys"),
      await rest("GET", "/api-keys", { key: keys.viewer }),
      403,
    );
    expect(forbidden.code).toBe("FORBIDDEN");
    const { key, id } = await callerFor(db, await sessionOf(db, "alice@acme.example"), ORG).apiKey.create({
      name: "short-lived",
      role: "admin",
    });
    await expectDocumented(operationOf("GET /api-keys"), await rest("GET", "/api-keys", { key }), 200);
    await expectDocumented(
      operationOf("POST /api-keys/{id}/revoke"),
      await rest("POST", `/api-keys/${id}/revoke`, { key, body: {} }),
      200,
    );
    await expectDocumented(operationOf("GET /api-keys"), await rest("GET", "/api-keys", { key }), 401);
  });

  it("another organization's row: 404", async () => {
    const globexNode = await db.node.findFirstOrThrow({ where: { organization: { slug: "globex" } } });
    const body = await expectDocumented(
      operationOf("POST /nodes/{nodeId}/revoke"),
      await rest("POST", `/nodes/${globexNode.id}/revoke`, { body: {} }),
      404,
    );
    expect(body).toEqual({ code: "NOT_FOUND", message: `node ${globexNode.id} not found` });
  });

  it("an unknown path answers 404 in the same error model", async () => {
    const response = await rest("GET", "/no-such-thing");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: "NOT_FOUND", message: expect.any(String) });
  });

  it("cursor pagination: limit, then nextCursor as cursor, until null", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response = await rest("GET", "/audit", { query: { limit: "2", ...(cursor ? { cursor } : {}) } });
      const page = await expectDocumented(operationOf("GET /audit"), response, 200);
      seen.push(...page.items.map((e: { id: string }) => e.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 100);
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    expect(seen).toHaveLength(await db.auditLog.count({ where: { organizationId: acme.id } }));
    expect(new Set(seen).size).toBe(seen.length);
    expect(pages).toBeGreaterThan(1);
  });

  it("exports the audit log as JSON lines and CSV with the list's filters", async () => {
    const op = operationOf("GET /audit/export");
    const jsonl = await rest("GET", "/audit/export", { query: { action: "apiKey." } });
    expect(jsonl.status).toBe(200);
    expect(jsonl.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    const lines = (await jsonl.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const acme = await db.organization.findUniqueOrThrow({ where: { slug: ORG } });
    expect(lines).toHaveLength(
      await db.auditLog.count({ where: { organizationId: acme.id, action: { startsWith: "apiKey." } } }),
    );
    expect(lines.every((l) => l.action.startsWith("apiKey."))).toBe(true);

    const csv = await rest("GET", "/audit/export", { query: { format: "csv" } });
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    const rows = (await csv.text()).trim().split("\r\n");
    expect(rows[0]).toBe("id,createdAt,actorType,actorId,action,targetType,targetId,before,after,actorName");
    expect(rows.length - 1).toBe(await db.auditLog.count({ where: { organizationId: acme.id } }));

    await expectDocumented(op, await rest("GET", "/audit/export", { key: null }), 401);
    await expectDocumented(op, await rest("GET", "/audit/export", { key: keys.viewer }), 403);
    const bad = await rest("GET", "/audit/export", { query: { format: "xml" } });
    expect(bad.status).toBe(400);
  });
});

describe("artifact upload over REST (bytes, documented by hand)", () => {
  const op = () => {
    const found = operations.find((o) => o.id === "PUT /apps/{appId}/versions/{versionId}/artifact");
    if (!found) throw new Error("upload not documented");
    return found.operation;
  };
  const upload = (versionId: string, key: string | null, body: Uint8Array = new Uint8Array([1, 2, 3])) => {
    const headers: Record<string, string> = { "content-type": "application/octet-stream" };
    if (key) headers.authorization = `Bearer ${key}`;
    return handleRestRequest(
      new Request(`${ORIGIN}${REST_BASE_PATH}/apps/${ids.app}/versions/${versionId}/artifact`, {
        method: "PUT",
        headers,
        body,
      }),
      { db, gateway: gateway.connection },
    );
  };

  it("answers each documented status in its documented shape", async () => {
    const sent = gateway.received.length;
    await expectDocumented(op(), await upload(ids.uploadVersion as string, null), 401);
    await expectDocumented(op(), await upload(ids.uploadVersion as string, keys.viewer), 403);
    const globexVersion = await db.appVersion.findFirstOrThrow({
      where: { organization: { slug: "globex" } },
    });
    await expectDocumented(op(), await upload(globexVersion.id, keys.operator), 404);
    // Refused before a byte went to the gateway.
    expect(gateway.received.length).toBe(sent);
    const ready = await expectDocumented(op(), await upload(ids.uploadVersion as string, keys.operator), 200);
    expect(ready.artifact).toMatchObject({ state: "ready", size: 3 });
    await expectDocumented(op(), await upload(ids.uploadVersion as string, keys.operator), 409);
  });
});
