/**
 * pnpm bench:console [--nodes 100000] [--apps-per-node 10] [--sites 200] [--second-org-nodes 10000]
 *                    [--requests 100] [--concurrent-requests 200] [--concurrency 8] [--warmup 10]
 *                    [--deep 25000] [--ref HEAD] [--revert <commit>…] [--baseline var/load/results-before.json --baseline-label "…"]
 *                    [--keep] [--reuse] [--no-cpu-lock] [--note "…"] [--render-only] [--out docs/benchmarks]
 *                    [--fairness-burst 32] [--fairness-requests 100] [--no-fairness]
 *
 * The console/API benchmark (issue 4): seeds the load stack with a large fleet, then measures the
 * REST API, the console's tRPC calls and page time-to-first-byte against their targets. Writes
 * docs/benchmarks/console-api.md with charts. Stops everything it started, also on failure and
 * Ctrl-C (unless --keep).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { type Cleanup, runWithCleanup } from "../interrupt.js";
import { describeMachine } from "../machine.js";
import { Progress, step } from "../progress.js";
import { REPO_ROOT } from "../stack.js";
import { type BenchCase, buildCases, type ListItem, TARGETS, trpcData } from "./cases.js";
import { writeCharts } from "./charts.js";
import { acquireCpuLock } from "./cpu-lock.js";
import { captureStatements, explainAnalyze, statementProfile } from "./explain.js";
import {
  type Aggressor,
  type FairnessScenarioResult,
  fairnessScenarios,
  runFairnessScenario,
  VICTIM_INTERVAL_MS,
} from "./fairness.js";
import { type CookieJar, timedRequest } from "./http.js";
import { allowConsoleOrigin, signInToConsole } from "./keycloak.js";
import { distribution, meetsTarget, summarizeLatencies } from "./latency.js";
import { type Client, callCase, runPass } from "./measure.js";
import { renderReport } from "./report.js";
import type { ConsoleBenchResults, ExplainResult, PassResult } from "./results.js";
import { seedFleet } from "./seed.js";
import { seedPlan } from "./seed-plan.js";
import {
  LOG_DIR,
  loadStackRunning,
  migrateAndSeedDemo,
  PROFILE,
  prepareApp,
  readStackEnv,
  stackDown,
  stackUp,
  VAR_DIR,
  WebProcess,
} from "./stack.js";

class UsageError extends Error {}

/** An argument as a shell would need it, so the report's command can be pasted. */
function shellWord(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

const RESULTS_FILE = join(VAR_DIR, "results.json");
const REPORT_NAME = "console-api";

function integer(name: string, value: string | undefined, min: number, max: number): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max)
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return number;
}

function readOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      nodes: { type: "string", default: "100000" },
      "apps-per-node": { type: "string", default: "10" },
      sites: { type: "string", default: "200" },
      "second-org-nodes": { type: "string", default: "10000" },
      requests: { type: "string", default: "100" },
      "concurrent-requests": { type: "string", default: "200" },
      concurrency: { type: "string", default: "8" },
      warmup: { type: "string", default: "10" },
      deep: { type: "string", default: "25000" },
      // The commit to build and measure (e.g. the one before a fix, for --baseline).
      ref: { type: "string", default: "HEAD" },
      // Commits taken out of the snapshot: the code before a fix, everything else equal.
      revert: { type: "string", multiple: true, default: [] },
      baseline: { type: "string" },
      "baseline-label": { type: "string", default: "before the fix" },
      // Leave the stack running at the end; --reuse measures a running one (seeded by an earlier --keep run).
      keep: { type: "boolean", default: false },
      reuse: { type: "boolean", default: false },
      "no-cpu-lock": { type: "boolean", default: false },
      out: { type: "string", default: "docs/benchmarks" },
      note: { type: "string", multiple: true, default: [] },
      "render-only": { type: "boolean", default: false },
      // Tenant fairness (issue 8 #15): globex's script with this many calls in flight against acme.
      "fairness-burst": { type: "string", default: "32" },
      "fairness-requests": { type: "string", default: "100" },
      "no-fairness": { type: "boolean", default: false },
    },
  });
  const nodes = integer("nodes", values.nodes, 1_000, 999_999);
  const deepDepth = integer("deep", values.deep, 100, nodes);
  return {
    nodes,
    appsPerNode: integer("apps-per-node", values["apps-per-node"], 1, 50),
    sites: integer("sites", values.sites, 10, 10_000),
    secondOrganizationNodes: integer("second-org-nodes", values["second-org-nodes"], 0, 999_999),
    requests: integer("requests", values.requests, 1, 100_000),
    concurrentRequests: integer("concurrent-requests", values["concurrent-requests"], 1, 100_000),
    concurrency: integer("concurrency", values.concurrency, 2, 256),
    warmup: integer("warmup", values.warmup, 0, 10_000),
    deepDepth,
    ref: values.ref ?? "HEAD",
    revert: values.revert ?? [],
    baseline: values.baseline ? resolve(REPO_ROOT, values.baseline) : undefined,
    baselineLabel: values["baseline-label"] ?? "before",
    keep: values.keep ?? false,
    reuse: values.reuse ?? false,
    cpuLock: !(values["no-cpu-lock"] ?? false),
    outDir: resolve(REPO_ROOT, values.out ?? "docs/benchmarks"),
    notes: values.note ?? [],
    renderOnly: values["render-only"] ?? false,
    fairnessBurst: integer("fairness-burst", values["fairness-burst"], 1, 60),
    fairnessRequests: integer("fairness-requests", values["fairness-requests"], 10, 10_000),
    fairness: !(values["no-fairness"] ?? false),
  };
}
type Options = ReturnType<typeof readOptions>;

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2));
  const command = ["pnpm bench:console", ...process.argv.slice(2).map(shellWord)].join(" ");
  if (options.renderOnly) {
    const stored = JSON.parse(readFileSync(RESULTS_FILE, "utf8")) as ConsoleBenchResults;
    const results = {
      ...stored,
      notes: [...stored.notes, ...options.notes],
      ...(options.baseline ? { baseline: baselineFrom(options.baseline, options.baselineLabel) } : {}),
    };
    // Notes stay with the results, so a later re-render keeps them.
    writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
    const report = await writeReport(results, options.outDir);
    process.stdout.write(`Report: ${relative(REPO_ROOT, report)}\n`);
    return;
  }
  await runWithCleanup((cleanup) => run(options, command, cleanup));
}

async function run(options: Options, command: string, cleanup: Cleanup): Promise<void> {
  const problems: string[] = [];
  const plan = seedPlan({
    nodes: options.nodes,
    appsPerNode: options.appsPerNode,
    sites: options.sites,
    secondOrganizationNodes: options.secondOrganizationNodes,
  });

  // --- stack, console build, data ----------------------------------------------------------------
  const running = loadStackRunning();
  if (running && !options.reuse)
    throw new UsageError(
      `a ${PROFILE} stack is already running (another run, or --keep); measure it with --reuse, or stop it: EDGEFLEET_PROFILE=${PROFILE} bash scripts/stack/down.sh`,
    );
  if (!running && options.reuse) throw new UsageError(`--reuse: no ${PROFILE} stack is running`);
  if (!options.keep)
    cleanup.add("stack down", async () => {
      step(`stopping the ${PROFILE} stack`);
      await stackDown();
    });
  let mark = Date.now();
  let env: Record<string, string>;
  if (options.reuse) {
    env = readStackEnv();
  } else {
    step(
      `starting the ${PROFILE} stack (Postgres, NATS, Mimir, Keycloak; logs in ${relative(REPO_ROOT, LOG_DIR)})`,
    );
    env = await stackUp();
  }
  const stackSeconds = (Date.now() - mark) / 1000;
  const need = (name: string) => {
    const value = env[name];
    if (!value) throw new Error(`var/${PROFILE}/stack.env has no ${name}`);
    return value;
  };
  const databaseUrl = need("DATABASE_URL");
  mark = Date.now();
  step("the console, built for production from the commit under test");
  const app = await prepareApp(env, options.ref, options.revert, (text) => step(`  ${text}`));
  const buildSeconds = app.reused ? null : (Date.now() - mark) / 1000;
  if (app.reused) step("  reusing the build of this commit");

  mark = Date.now();
  let seed: ConsoleBenchResults["seed"];
  const seededFile = join(VAR_DIR, "seed.json");
  if (options.reuse && existsSync(seededFile)) {
    step("reusing the seeded data of the running stack");
    await migrateAndSeedDemo(app.dir, env);
    seed = JSON.parse(readFileSync(seededFile, "utf8")) as ConsoleBenchResults["seed"];
  } else {
    step("migrations and demo organizations");
    await migrateAndSeedDemo(app.dir, env);
    step(`seeding ${options.nodes.toLocaleString("en")} nodes (set-based SQL)`);
    seed = await seedFleet(databaseUrl, plan);
    writeFileSync(seededFile, `${JSON.stringify(seed, null, 2)}\n`);
  }
  const seedSeconds = (Date.now() - mark) / 1000;
  const acme = seed.organizations.find((o) => o.slug === "acme");
  if (!acme) throw new Error("the seed has no acme organization");

  // --- console, sign-in, API key -------------------------------------------------------------------
  step("starting the console (apps/web/server.mjs)");
  let web = await WebProcess.start(app.dir, env);
  cleanup.add("stop the console", () => web.stop());
  await allowConsoleOrigin({
    keycloakUrl: need("KEYCLOAK_URL"),
    realm: "edgefleet",
    clientId: need("AUTH_KEYCLOAK_ID"),
    origin: web.url,
    admin: { username: need("KEYCLOAK_ADMIN_USERNAME"), password: need("KEYCLOAK_ADMIN_PASSWORD") },
  });
  step("signing alice in through Keycloak");
  const session: CookieJar = await signInToConsole(web.url, "alice", "edgefleet");
  session.set("edgefleet-org", "acme");
  const created = await timedRequest(`${web.url}/api/trpc/apiKey.create`, {
    method: "POST",
    headers: { cookie: session.header(), "content-type": "application/json" },
    body: JSON.stringify({ json: { name: `bench-console-${Date.now()}`, role: "viewer" } }),
  });
  const apiKey = trpcData<{ key: string }>(created).key;
  // The other organization's script (fairness): bob's viewer key for globex.
  const aggressorKey = options.fairness ? await apiKeyOf(web.url, "bob", "globex") : null;

  const client: Client = {
    baseUrl: web.url,
    headersFor: (bench: BenchCase): Record<string, string> =>
      bench.group === "REST API" ? { authorization: `Bearer ${apiKey}` } : { cookie: session.header() },
  };
  const openapi = JSON.parse((await timedRequest(`${web.url}/api/openapi.json`)).body) as {
    paths: Record<string, unknown>;
  };
  const restNodeDetail = Object.keys(openapi.paths).includes("/nodes/{id}");
  if (!restNodeDetail)
    problems.push(
      "REST has no node-detail path (GET /nodes/{id}) in this build: node detail measured through tRPC only.",
    );
  const { nodeIds, expectedTotal } = await nodeSample(databaseUrl, acme.id);
  step(`paging ${options.deepDepth.toLocaleString("en")} nodes deep for the deep cursors`);
  const deep = {
    depth: options.deepDepth,
    byName: await cursorAt(web.url, apiKey, {}, options.deepDepth),
    regionByLastSeen: await cursorAt(
      web.url,
      apiKey,
      { selector: "region in (eu-west,eu-north)", sort: { field: "lastSeenAt", direction: "desc" } },
      options.deepDepth,
    ),
  };
  const cases = buildCases({ nodeIds, expectedTotal, deep, restNodeDetail, now: () => Date.now() });
  for (const bench of cases) {
    await callCase(client, bench, 0).catch((error: unknown) => {
      throw new Error(
        `${bench.id} gives a wrong answer before measuring: ${error instanceof Error ? error.message : error}`,
      );
    });
  }

  // --- measure (one benchmark at a time on this machine) --------------------------------------------
  let lockWaitSeconds = 0;
  if (options.cpuLock) {
    step("taking the CPU lock (flock /tmp/bench-cpu.lock)");
    const lock = await acquireCpuLock(() => step("  waiting: another benchmark is measuring"));
    cleanup.add("release the CPU lock", () => lock.release());
    lockWaitSeconds = lock.waitedMs / 1000;
  }
  const loadBefore = loadavg()[0] ?? 0;
  const passes: PassResult[] = [];
  step(`measuring: ${cases.length} cases, sequential`);
  passes.push(
    toPass(
      "sequential",
      1,
      await runPass(client, cases, {
        name: "sequential",
        requests: options.requests,
        concurrency: 1,
        warmup: options.warmup,
      }),
    ),
  );
  step(`measuring: ${cases.length} cases, ${options.concurrency} in flight`);
  passes.push(
    toPass(
      "concurrent",
      options.concurrency,
      await runPass(client, cases, {
        name: `${options.concurrency} in flight`,
        requests: options.concurrentRequests,
        concurrency: options.concurrency,
        warmup: 0,
      }),
    ),
  );
  const loadAfter = loadavg()[0] ?? 0;

  step("query plans of the slowest API case and of every case that missed its target");
  const explains = await explainCases(cases, passes, client, databaseUrl);

  const fairness: FairnessScenarioResult[] = [];
  if (aggressorKey) {
    const victimCases = FAIRNESS_VICTIM_CASES.map((id) => {
      const found = cases.find((c) => c.id === id);
      if (!found) throw new Error(`no case ${id} for the fairness scenarios`);
      return found;
    });
    const aggressor: Aggressor = {
      request: () => ({
        url: `${web.url}/api/v1/nodes/search`,
        method: "POST",
        headers: { authorization: `Bearer ${aggressorKey}`, "content-type": "application/json" },
        body: JSON.stringify({ limit: 100 }),
      }),
    };
    for (const scenario of fairnessScenarios(options.fairnessBurst)) {
      step(`fairness: ${scenario.label} (the console restarted with its limits)`);
      await web.stop();
      web = await WebProcess.start(app.dir, env, scenario.consoleEnv);
      // Warm the new process (compiled routes, pools) before anything is timed.
      for (const bench of victimCases)
        for (let i = 0; i < options.warmup; i++) await callCase(client, bench, i).catch(() => undefined);
      const result = await runFairnessScenario(
        scenario,
        client,
        victimCases,
        aggressor,
        options.fairnessRequests,
      );
      fairness.push(result);
      const worst = Math.max(...result.victim.map((r) => r.summary?.p99 ?? Number.POSITIVE_INFINITY));
      step(
        `  victim worst p99 ${worst.toFixed(0)} ms${result.aggressor ? `; aggressor ${result.aggressor.okPerSecond.toFixed(0)} ok/s, ${result.aggressor.limitedPerSecond.toFixed(0)} 429/s` : ""}`,
      );
    }
  }

  const results: ConsoleBenchResults = {
    command,
    commit: `${app.commit.slice(0, 7)}${app.reverted.length ? ` without ${app.reverted.map((c) => c.slice(0, 7)).join(", ")}` : ""}`,
    machine: describeMachine(),
    config: {
      nodes: options.nodes,
      appsPerNode: options.appsPerNode,
      sites: options.sites,
      secondOrganizationNodes: options.secondOrganizationNodes,
      requests: options.requests,
      concurrentRequests: options.concurrentRequests,
      concurrency: options.concurrency,
      warmup: options.warmup,
      deepDepth: options.deepDepth,
    },
    seed,
    setupSeconds: { stack: stackSeconds, build: buildSeconds, seed: seedSeconds },
    cases: cases.map(({ id, group, label, timing }) => ({ id, group, label, timing })),
    passes,
    loadAverage: { before: loadBefore, after: loadAfter },
    lockWaitSeconds,
    explains,
    fairness: fairness.length ? { victimIntervalMs: VICTIM_INTERVAL_MS, scenarios: fairness } : null,
    baseline: options.baseline ? baselineFrom(options.baseline, options.baselineLabel) : null,
    problems: [
      ...problems,
      ...passes.flatMap((pass) =>
        pass.runs
          .filter((r) => r.summary && r.summary.errors > 0)
          .map((r) => `${r.caseId} (${pass.name}): ${r.summary?.errors} errors, first: ${r.firstError}`),
      ),
    ],
    notes: options.notes,
  };
  mkdirSync(VAR_DIR, { recursive: true });
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  // Every run kept by commit, for --baseline.
  copyFileSync(RESULTS_FILE, join(VAR_DIR, `results-${results.commit.replace(/[^\w.-]+/g, "_")}.json`));
  const report = await writeReport(results, options.outDir);
  printSummary(results, relative(REPO_ROOT, report));
  if (options.keep)
    step(
      `the ${PROFILE} stack keeps running (--keep): measure again with --reuse; stop: EDGEFLEET_PROFILE=${PROFILE} bash scripts/stack/down.sh`,
    );
}

function toPass(name: string, concurrency: number, runs: Awaited<ReturnType<typeof runPass>>): PassResult {
  return {
    name,
    concurrency,
    runs: runs.map((run) => ({
      caseId: run.caseId,
      summary: summarizeLatencies(run.samples, run.errors),
      throughput: run.throughput,
      firstError: run.firstError,
      distribution: distribution(run.samples),
    })),
  };
}

function baselineFrom(file: string, label: string): ConsoleBenchResults["baseline"] {
  const before = JSON.parse(readFileSync(file, "utf8")) as ConsoleBenchResults;
  return { commit: before.commit, label, passes: before.passes };
}

/** The victim's calls in the fairness scenarios: the console's list and counts, and a script's list. */
const FAIRNESS_VICTIM_CASES = ["rest-list-first-page", "trpc-list-first-page", "trpc-counts"] as const;

/** A viewer API key of `organization`, made by `user` through the console's own apiKey.create. */
async function apiKeyOf(baseUrl: string, user: string, organization: string): Promise<string> {
  const session = await signInToConsole(baseUrl, user, "edgefleet");
  session.set("edgefleet-org", organization);
  const created = await timedRequest(`${baseUrl}/api/trpc/apiKey.create`, {
    method: "POST",
    headers: { cookie: session.header(), "content-type": "application/json" },
    body: JSON.stringify({ json: { name: `bench-fairness-${Date.now()}`, role: "viewer" } }),
  });
  return trpcData<{ key: string }>(created).key;
}

/** 100 node ids spread over the large organization, and how many nodes counts must report. */
async function nodeSample(databaseUrl: string, organizationId: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const ids = await client.query<{ id: string }>(
      `SELECT id::text FROM (SELECT id, row_number() OVER (ORDER BY name) AS r FROM node
        WHERE organization_id = $1::uuid AND name LIKE 'edge-%') n WHERE r % 1000 = 500 ORDER BY r`,
      [organizationId],
    );
    const total = await client.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM node WHERE organization_id = $1::uuid",
      [organizationId],
    );
    return { nodeIds: ids.rows.map((row) => row.id), expectedTotal: Number(total.rows[0]?.n) };
  } finally {
    await client.end();
  }
}

/** The cursor after `depth` nodes of a list, by paging through the REST API 200 at a time. */
async function cursorAt(
  baseUrl: string,
  apiKey: string,
  input: Record<string, unknown>,
  depth: number,
): Promise<string> {
  let cursor: string | null = null;
  const progress = new Progress("cursor", depth);
  for (let seen = 0; seen < depth; ) {
    const limit = Math.min(200, depth - seen);
    const response = await timedRequest(`${baseUrl}/api/v1/nodes/search`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ ...input, limit, cursor }),
    });
    if (response.status !== 200)
      throw new Error(`paging for a deep cursor: HTTP ${response.status} ${response.body.slice(0, 200)}`);
    const page = JSON.parse(response.body) as { items: ListItem[]; nextCursor: string | null };
    seen += page.items.length;
    progress.update(seen);
    if (!page.nextCursor) throw new Error(`the list ends after ${seen} nodes, before ${depth}`);
    cursor = page.nextCursor;
  }
  progress.finish(`cursor ${depth.toLocaleString("en")} deep`);
  return cursor as string;
}

async function explainCases(
  cases: readonly BenchCase[],
  passes: readonly PassResult[],
  client: Client,
  databaseUrl: string,
): Promise<ExplainResult[]> {
  const sequential = passes[0];
  if (!sequential) return [];
  const byId = new Map(cases.map((c) => [c.id, c]));
  const p99 = (id: string) => sequential.runs.find((r) => r.caseId === id)?.summary?.p99 ?? 0;
  const api = cases.filter((c) => c.group !== "page").sort((a, b) => p99(b.id) - p99(a.id));
  const chosen = new Map<string, string>();
  if (api[0]) chosen.set(api[0].id, "The slowest API case (highest sequential p99).");
  for (const pass of passes)
    for (const run of pass.runs) {
      const bench = byId.get(run.caseId);
      if (bench && !meetsTarget(run.summary, TARGETS[bench.group]) && !chosen.has(bench.id))
        chosen.set(
          bench.id,
          `Missed its target (${pass.concurrency === 1 ? "sequential" : `${pass.concurrency} in flight`}).`,
        );
    }
  const explains: ExplainResult[] = [];
  const requests = 5;
  for (const [id, why] of [...chosen].slice(0, 6)) {
    const bench = byId.get(id) as BenchCase;
    const statements = await captureStatements(
      databaseUrl,
      join(LOG_DIR, "postgres.log"),
      "edgefleet",
      async () => {
        for (let i = 0; i < requests; i++) await callCase(client, bench, i).catch(() => undefined);
      },
    );
    const profile = statementProfile(statements, requests);
    const slowest = [...statements].sort((a, b) => b.durationMs - a.durationMs)[0];
    let explained: ExplainResult["explained"] = null;
    if (slowest) {
      try {
        explained = { sql: slowest.sql, plan: await explainAnalyze(databaseUrl, slowest) };
      } catch (error) {
        explained = {
          sql: slowest.sql,
          plan: `EXPLAIN failed: ${error instanceof Error ? error.message : error}`,
        };
      }
    }
    explains.push({
      caseId: id,
      why,
      requests,
      statements: profile.map(({ sql, callsPerRequest, meanMs, maxMs }) => ({
        sql,
        callsPerRequest,
        meanMs,
        maxMs,
      })),
      explained,
    });
  }
  return explains;
}

async function writeReport(results: ConsoleBenchResults, outDir: string): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  const charts = await writeCharts(results, outDir, REPORT_NAME);
  const file = join(outDir, `${REPORT_NAME}.md`);
  writeFileSync(file, renderReport(results, charts));
  // The raw results beside the report, so its figures can be checked and re-rendered from a clone.
  writeFileSync(join(outDir, `${REPORT_NAME}-results.json`), `${JSON.stringify(results, null, 2)}\n`);
  return file;
}

function printSummary(results: ConsoleBenchResults, reportFile: string): void {
  process.stdout.write("\nSummary (API: p99, target 1 s; pages: p95 TTFB, target 500 ms)\n");
  const labelOf = new Map(results.cases.map((c) => [c.id, c]));
  for (const pass of results.passes) {
    process.stdout.write(`  ${pass.concurrency === 1 ? "sequential" : `${pass.concurrency} in flight`}\n`);
    for (const run of pass.runs) {
      const bench = labelOf.get(run.caseId);
      if (!bench || !run.summary) continue;
      const target = TARGETS[bench.group];
      const value = target.percentile === 95 ? run.summary.p95 : run.summary.p99;
      const ok = meetsTarget(run.summary, target) ? "ok  " : "MISS";
      process.stdout.write(
        `    ${ok} ${`${bench.group}: ${bench.label}`.padEnd(70)} p50 ${run.summary.p50.toFixed(0).padStart(5)} ms  p${target.percentile} ${value.toFixed(0).padStart(5)} ms\n`,
      );
    }
  }
  for (const problem of results.problems) process.stdout.write(`  ! ${problem}\n`);
  process.stdout.write(`\nReport: ${reportFile}\n`);
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`bench:console: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `bench:console failed: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
  );
  process.exit(1);
});
