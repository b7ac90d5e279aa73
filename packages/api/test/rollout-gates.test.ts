/**
 * Metric gates over tRPC (issue 11): a strategy's operator PromQL is checked against the real Mimir
 * before a rollout exists (a query that does not parse, that names another organization or that
 * gives no per-node vector is a 400 naming the field and creates nothing; a window longer than
 * the batch timeout too), and `rollout.gates` shows where each batch's judging stands and its
 * verdict — here a batch judged on no data at all, which is inconclusive and halts the rollout,
 * never a silent pass. The canary-vs-baseline verdict on real metrics is the gateway's
 * integration test (apps/gateway/test/rollout-gates.integration.test.ts).
 */
import { type Db, setDesiredApps } from "@edgefleet/db";
import { DEFAULT_FRESHNESS_GRACE_MS, judgeDueGates } from "@edgefleet/rollout-store";
import { TRPCError } from "@trpc/server";
import { pushTimeseries } from "prometheus-remote-write";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZodError } from "zod";
import type { ApiSession } from "../src";
import { addMember, ORG, OTHER_ORG } from "./actors";
import { callerFor } from "./callers";
import { agentsRun, labelledNodes, readyApp, settle } from "./rollout-fixtures";
import { createTestDatabase, type TestDatabase } from "./test-database";

let testDb: TestDatabase;
let db: Db;
let viewer: ApiSession;
let operator: ApiSession;
let outsider: ApiSession;
let acmeId: string;
let app: Awaited<ReturnType<typeof readyApp>>;

const MIMIR_URL = process.env.MIMIR_URL;
if (!MIMIR_URL) throw new Error("MIMIR_URL must point at the test stack's Mimir");

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
  viewer = await addMember(db, ORG, "viewer", "gate-viewer@acme.example");
  operator = await addMember(db, ORG, "operator", "gate-op@acme.example");
  outsider = await addMember(db, OTHER_ORG, "owner", "gate-owner@globex.example");
  acmeId = (await db.organization.findUniqueOrThrow({ where: { slug: ORG } })).id;
  app = await readyApp(db, acmeId, "gate-app", ["1.0.0", "2.0.0"]);
  await labelledNodes(db, acmeId, "gate", 6, { fleet: "gates", hw: "pi4" });
});

afterAll(async () => {
  await testDb?.drop();
});

const ops = () => callerFor(db, operator, ORG);

function gate(overrides: Record<string, unknown> = {}) {
  return {
    name: "errors",
    metric: { promql: "sum by (node) (rate(edgefleet_node_control_bytes_total[$window]))" },
    windowSeconds: 60,
    criterion: { kind: "threshold" as const, max: 1000 },
    ...overrides,
  };
}

type CreateInput = Parameters<ReturnType<typeof ops>["rollout"]["create"]>[0];
/** Bad input on purpose (unknown presets, missing criteria): typed as the procedure's input. */
const input = (gates: unknown[], extra: Record<string, unknown> = {}) =>
  ({
    appVersionId: app.versions["2.0.0"] as string,
    target: { selector: "fleet=gates" },
    strategy: { batches: [{ count: 2, gates }], ...extra },
  }) as unknown as CreateInput;

async function refusal(call: Promise<unknown>): Promise<{ paths: string[]; message: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof TRPCError && error.code === "BAD_REQUEST" && error.cause instanceof ZodError) {
      return { paths: error.cause.issues.map((i) => i.path.join(".")), message: error.message };
    }
    throw error;
  }
  throw new Error("the call was not refused");
}

const rolloutCount = () => db.rollout.count({ where: { organizationId: acmeId } });

describe("gate validation before a rollout exists", () => {
  it.each([
    ["PromQL that does not parse", gate({ metric: { promql: "sum(rate(x[5m])" } }), "parse error"],
    ["PromQL naming another organization", gate({ metric: { promql: 'up{org="globex"}' } }), "globex"],
    [
      "PromQL that gives a scalar, not a value per node",
      gate({ metric: { promql: "1 + 1" } }),
      "instant vector",
    ],
  ])("refuses %s with a 400 naming the field, creating nothing", async (_name, bad, message) => {
    const before = await rolloutCount();
    const refused = await refusal(ops().rollout.create(input([bad])));
    expect(refused.paths).toEqual(["strategy.batches.0.gates.0.metric.promql"]);
    expect(refused.message).toContain(message);
    expect(await rolloutCount()).toBe(before);
  });

  it("refuses a window longer than the batch timeout, an unknown preset and a gate without a criterion", async () => {
    const before = await rolloutCount();
    const long = await refusal(
      ops().rollout.create(input([gate({ windowSeconds: 900 })], { defaults: { timeoutSeconds: 600 } })),
    );
    expect(long.paths).toContain("strategy.batches.0.gates.0.windowSeconds");
    const preset = await refusal(ops().rollout.create(input([gate({ metric: { preset: "gpu" } })])));
    expect(preset.paths).toContain("strategy.batches.0.gates.0.metric");
    const noCriterion = await refusal(
      ops().rollout.create(input([{ name: "x", metric: { preset: "app_cpu" } }])),
    );
    expect(noCriterion.paths).toContain("strategy.batches.0.gates.0.criterion");
    expect(await rolloutCount()).toBe(before);
  });

  it("a viewer cannot create a gated rollout", async () => {
    await expect(callerFor(db, viewer, ORG).rollout.create(input([gate()]))).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });
});

describe("rollout.checkGateQuery (the console's PromQL editor)", () => {
  /** Remote write of one sample per node under `tenant`, as the gateway writes metrics. */
  async function write(tenant: string, metric: string, nodes: string[]): Promise<void> {
    const at = Math.floor(Date.now() / 1000) * 1000 - 5_000;
    const result = await pushTimeseries(
      nodes.map((node) => ({ labels: { __name__: metric, node }, samples: [{ value: 1, timestamp: at }] })),
      {
        url: new URL("/api/v1/push", MIMIR_URL).toString(),
        headers: { "X-Scope-OrgID": tenant },
        fetch: (url, init) =>
          fetch(url, { method: "POST", headers: init?.headers, body: init?.body as unknown as Uint8Array }),
      },
    );
    expect(result.status, result.errorMessage).toBe(200);
  }

  it("runs the query as the caller's organization and says how many series and nodes it gives", async () => {
    const metric = `gate_check_${Date.now()}`;
    const globexId = (await db.organization.findUniqueOrThrow({ where: { slug: OTHER_ORG } })).id;
    await write(acmeId, metric, ["n1", "n2"]);
    await write(globexId, metric, ["g1", "g2", "g3"]);
    const promql = `max_over_time(${metric}[$window])`;
    // A viewer may check (the preview is theirs too); the tenant is never a parameter.
    const acme = await callerFor(db, viewer, ORG).rollout.checkGateQuery({ promql, windowSeconds: 120 });
    expect(acme).toEqual({ query: `max_over_time(${metric}[120s])`, series: 2, nodes: 2, withoutNode: 0 });
    const globex = await callerFor(db, outsider, OTHER_ORG).rollout.checkGateQuery({ promql });
    expect(globex.nodes).toBe(3);
    const summed = await ops().rollout.checkGateQuery({ promql: `sum(${metric})` });
    expect(summed).toMatchObject({ series: 1, nodes: 0, withoutNode: 1 });
  });

  it.each([
    ["does not parse", "sum(rate(x[5m])", "parse error"],
    ["names another organization", 'up{org="globex"}', "globex"],
    ["gives a scalar", "1 + 1", "instant vector"],
    ["is empty", "   ", "must not be empty"],
  ])("refuses PromQL that %s with a 400 naming promql", async (_name, promql, message) => {
    const refused = await refusal(ops().rollout.checkGateQuery({ promql }));
    expect(refused.paths).toEqual(["promql"]);
    expect(refused.message).toContain(message);
  });

  it("refuses a window out of range, naming it", async () => {
    const refused = await refusal(ops().rollout.checkGateQuery({ promql: "up", windowSeconds: 5 }));
    expect(refused.paths).toEqual(["windowSeconds"]);
  });
});

describe("rollout.gates", () => {
  it("shows each gated batch from not started to judged; no data is inconclusive and halts the rollout", async () => {
    const created = await ops().rollout.create(
      input([
        gate(),
        {
          name: "app-cpu",
          metric: { preset: "app_cpu" },
          windowSeconds: 10,
          criterion: { kind: "compare" },
          critical: true,
        },
      ]),
    );
    const before = await callerFor(db, viewer, ORG).rollout.gates({ id: created.id });
    expect(before.actions).toEqual({ onFail: "rollback", onInconclusive: "pause" });
    expect(before.batches).toEqual([]); // not started: no plan yet

    await ops().rollout.start({ id: created.id });
    await settle(db, created.id);
    let gates = await ops().rollout.gates({ id: created.id });
    expect(gates.batches.map((b) => [b.batch, b.state])).toEqual([[0, "installing"]]);

    await agentsRun(db, app.appId, app.versions["2.0.0"] as string);
    await settle(db, created.id);
    gates = await ops().rollout.gates({ id: created.id });
    expect(gates.batches[0]?.state).toBe("watching");
    const windowEnd = gates.batches[0]?.windowEnd?.getTime() as number;
    expect(windowEnd - (gates.batches[0]?.windowStart?.getTime() as number)).toBe(60_000);

    // Once the window is over the controller waits for the canary's samples of the window's end
    // to reach Mimir; these nodes never reported metrics, so it waits until the grace is over…
    const early = await judgeDueGates(db, created.id, {
      mimir: { url: MIMIR_URL },
      now: () => windowEnd + 1,
    });
    expect(early).toBeNull();
    expect((await ops().rollout.gates({ id: created.id })).batches[0]?.state).toBe("watching");
    // …and then judges on what is there.
    const judged = await judgeDueGates(db, created.id, {
      mimir: { url: MIMIR_URL },
      now: () => windowEnd + DEFAULT_FRESHNESS_GRACE_MS + 1,
    });
    expect(judged?.result.outcome).toBe("inconclusive");
    await settle(db, created.id);

    gates = await callerFor(db, viewer, ORG).rollout.gates({ id: created.id });
    const batch = gates.batches[0];
    expect(batch).toMatchObject({ batch: 0, state: "judged", outcome: "inconclusive" });
    expect(batch?.verdicts.map((v) => [v.gate, v.outcome])).toEqual([
      ["errors", "no_data"],
      ["app-cpu", "no_data"],
    ]);
    expect(batch?.verdicts[1]?.queries.canary).toContain('version="2.0.0"');
    expect(batch?.baseline?.nodes).toBe(0); // no node runs another version
    const detail = await ops().rollout.byId({ id: created.id });
    expect(detail.status).toBe("failed");
    expect(detail.statusReason).toContain("metric gates: inconclusive");

    // Another organization cannot see it.
    await expect(callerFor(db, outsider, OTHER_ORG).rollout.gates({ id: created.id })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await ops().rollout.abort({ id: created.id });
  });

  it("waits for the canary's samples of the window's end to reach Mimir, then judges at once", async () => {
    const fresh = await readyApp(db, acmeId, "fresh-app", ["1.0.0", "2.0.0"]);
    const nodeIds = await labelledNodes(db, acmeId, "fresh", 4, { fleet: "fresh", hw: "pi4" });
    for (const nodeId of nodeIds)
      await setDesiredApps(db, acmeId, nodeId, { put: [fresh.versions["1.0.0"] as string] });
    await agentsRun(db, fresh.appId, fresh.versions["1.0.0"] as string);
    const created = await ops().rollout.create({
      appVersionId: fresh.versions["2.0.0"] as string,
      target: { selector: "fleet=fresh" },
      strategy: { batches: [{ count: 2, gates: [gate()] }, { percent: 100 }] },
    } as CreateInput);
    await ops().rollout.start({ id: created.id });
    await settle(db, created.id);
    await agentsRun(db, fresh.appId, fresh.versions["2.0.0"] as string);
    await settle(db, created.id);
    const watched = (await ops().rollout.gates({ id: created.id })).batches[0];
    expect(watched?.state).toBe("watching");
    const windowEnd = watched?.windowEnd?.getTime() as number;
    const canary = (
      await db.rolloutNode.findMany({ where: { rolloutId: created.id, dispatchedAt: { not: null } } })
    ).map((n) => n.nodeId);
    expect(canary).toHaveLength(2);
    const judge = () =>
      judgeDueGates(db, created.id, { mimir: { url: MIMIR_URL }, now: () => windowEnd + 1 });

    // The window is over but no canary sample at or after its end is in Mimir yet: no verdict.
    expect(await judge()).toBeNull();
    // The canary's reports of the window's end arrive (as the gateway writes them; Mimir takes
    // samples up to 10 min ahead, and the window ends about a minute from now).
    const pushed = await pushTimeseries(
      canary.map((node) => ({
        labels: { __name__: "edgefleet_node_cpu_usage_ratio", org: acmeId, node },
        samples: [{ value: 0.2, timestamp: windowEnd + 1 }],
      })),
      {
        url: new URL("/api/v1/push", MIMIR_URL).toString(),
        headers: { "X-Scope-OrgID": acmeId },
        fetch: (url, init) =>
          fetch(url, { method: "POST", headers: init?.headers, body: init?.body as unknown as Uint8Array }),
      },
    );
    expect(pushed.status, pushed.errorMessage).toBe(200);
    // Judged at once, well inside the grace.
    const judged = await judge();
    expect(judged?.batch).toBe(0);
    expect(judged?.result.evaluatedAt).toBeLessThan(windowEnd + DEFAULT_FRESHNESS_GRACE_MS);
    await ops().rollout.abort({ id: created.id });
  });

  it("charts the watched batch's canary against its baseline while the window is open, before any verdict", async () => {
    const live = await readyApp(db, acmeId, "live-app", ["1.0.0", "2.0.0"]);
    const nodeIds = await labelledNodes(db, acmeId, "live", 6, { fleet: "live", hw: "pi4" });
    // Every node runs 1.0.0: those left out of the first batch are the baseline's candidates.
    for (const nodeId of nodeIds)
      await setDesiredApps(db, acmeId, nodeId, { put: [live.versions["1.0.0"] as string] });
    await agentsRun(db, live.appId, live.versions["1.0.0"] as string);
    const metric = `gate_live_${Date.now()}`;
    const created = await ops().rollout.create({
      appVersionId: live.versions["2.0.0"] as string,
      target: { selector: "fleet=live" },
      strategy: {
        batches: [
          {
            count: 2,
            gates: [
              gate({
                name: "load",
                metric: { promql: `max by (node) (max_over_time(${metric}[$window]))` },
                criterion: { kind: "threshold", max: 10 },
              }),
            ],
          },
          { percent: 100 },
        ],
      },
    } as CreateInput);
    await ops().rollout.start({ id: created.id });
    await settle(db, created.id);
    await agentsRun(db, live.appId, live.versions["2.0.0"] as string);
    await settle(db, created.id);
    // The window opened when the batch's nodes all ran the version (read from the state: the page's
    // first read would keep its charts for a few seconds, before there are any samples).
    const state = (await db.rollout.findUniqueOrThrow({ where: { id: created.id } })).state as {
      batches: Array<{ finishedAt: number | null }>;
    };
    const windowStart = state.batches[0]?.finishedAt as number;
    expect(windowStart).toBeGreaterThan(0);
    const canary = new Set(
      (await db.rolloutNode.findMany({ where: { rolloutId: created.id, dispatchedAt: { not: null } } })).map(
        (n) => n.nodeId,
      ),
    );
    expect(canary.size).toBe(2);
    // The nodes' load as the gateway writes it: the canary at 5, the old version at 1.
    const at = windowStart - 1_000;
    const result = await pushTimeseries(
      nodeIds.map((node) => ({
        labels: { __name__: metric, node },
        samples: [{ value: canary.has(node) ? 5 : 1, timestamp: at }],
      })),
      {
        url: new URL("/api/v1/push", MIMIR_URL).toString(),
        headers: { "X-Scope-OrgID": acmeId },
        fetch: (url, init) =>
          fetch(url, { method: "POST", headers: init?.headers, body: init?.body as unknown as Uint8Array }),
      },
    );
    expect(result.status, result.errorMessage).toBe(200);

    const gates = await callerFor(db, viewer, ORG).rollout.gates({ id: created.id });
    const batch = gates.batches[0];
    expect(batch).toMatchObject({ state: "watching", outcome: null, verdicts: [] });
    expect(batch?.live).toMatchObject({ canaryNodes: 2 });
    expect(batch?.live?.baselineNodes).toBeGreaterThan(0);
    const chart = batch?.live?.charts[0];
    expect(chart).toMatchObject({ gate: "load", error: null });
    expect(chart?.canary.at(0)?.[1]).toBe(5);
    expect(chart?.baseline.at(0)?.[1]).toBe(1);
    // Judged batches and batches not watched carry no live chart.
    expect(gates.batches.slice(1).every((b) => b.live === null)).toBe(true);
    await ops().rollout.abort({ id: created.id });
  });
});
