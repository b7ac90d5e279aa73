import { join } from "node:path";
import { type Db, mintApiKey } from "@edgefleet/db";
import { type BenchCase, json, restCountsCase } from "../console/cases.js";
import { type CaseSummary, summarizeLatencies } from "../console/latency.js";
import { type Client, runPass } from "../console/measure.js";
import { prepareApp, WebProcess } from "../console/stack.js";

/**
 * Issue 16's API SLI: "API p99 ≤ 1 s for single-object calls", measured during the scale
 * scenario's idle and churn phases, i.e. while the whole fleet reports and while 1 % of it comes
 * and goes. The console runs from the same production build the console benchmark uses (reused
 * while the console's sources are unchanged), and an integration calls its REST API with a
 * viewer key, one call at a time, as a script or the Terraform provider would.
 */

export const API_SLO_MS = 1_000;

export interface ApiPhaseCase {
  caseId: string;
  label: string;
  summary: CaseSummary | null;
  firstError: string | null;
}

export interface ApiPhaseResult {
  phase: string;
  passes: number;
  cases: ApiPhaseCase[];
}

export interface ScaleApiTargets {
  nodeIds: readonly string[];
  siteIds: readonly string[];
  appIds: readonly string[];
  /** Nodes the organization holds (what counts must say). */
  expectedTotal: number;
}

const rotate = (ids: readonly string[], i: number) => ids[i % ids.length] as string;

/** The single-object calls (and the fleet page's counts and first page, for comparison). Pure. */
export function scaleApiCases(targets: ScaleApiTargets): BenchCase[] {
  const detail = (id: string, label: string, path: (i: number) => string): BenchCase => ({
    id,
    group: "REST API",
    label,
    request: (i) => ({ path: path(i), method: "GET" }),
    check: (response) => {
      if (typeof json<{ id?: unknown }>(response).id !== "string") throw new Error("no id in the answer");
    },
    timing: "total",
  });
  return [
    detail("node", "GET /nodes/{id}", (i) => `/api/v1/nodes/${rotate(targets.nodeIds, i)}`),
    detail("site", "GET /sites/{id}", (i) => `/api/v1/sites/${rotate(targets.siteIds, i)}`),
    detail("app", "GET /apps/{id}", (i) => `/api/v1/apps/${rotate(targets.appIds, i)}`),
    restCountsCase(targets.expectedTotal),
    {
      id: "list",
      group: "REST API",
      label: "POST /nodes/search, first page of 100",
      request: () => ({ path: "/api/v1/nodes/search", method: "POST", body: { limit: 100 } }),
      check: (response) => {
        const items = json<{ items: unknown[] }>(response).items;
        if (items.length !== Math.min(100, targets.expectedTotal))
          throw new Error(`the first page has ${items.length} nodes`);
      },
      timing: "total",
    },
  ];
}

/** The console (production build of HEAD) on the scale stack, and a viewer key of the organization. */
export async function startScaleConsole(input: {
  db: Db;
  organizationId: string;
  stackEnv: Record<string, string>;
  logDir: string;
  say: (text: string) => void;
}): Promise<{ web: WebProcess; apiKey: string }> {
  const app = await prepareApp(input.stackEnv, "HEAD", [], input.say, input.logDir);
  const web = await WebProcess.start(
    app.dir,
    input.stackEnv,
    {},
    { logFile: join(input.logDir, "scale-web.log") },
  );
  // A viewer key, stored as the console's apiKey.create stores one (the scale stack has no Keycloak
  // to sign a person in with).
  const { key, prefix, hash } = mintApiKey();
  await input.db.apiKey.create({
    data: {
      organizationId: input.organizationId,
      name: `scale-api-slo-${Date.now()}`,
      role: "viewer",
      prefix,
      hash,
      createdBy: "bench:scale",
    },
  });
  return { web, apiKey: key };
}

/**
 * Calls every case `requests` times, one at a time, pass after pass until `until` settles (at least
 * one pass), and summarizes each case over all passes.
 */
export async function measureApiDuring(input: {
  phase: string;
  web: WebProcess;
  apiKey: string;
  cases: readonly BenchCase[];
  requests: number;
  until: Promise<unknown>;
}): Promise<ApiPhaseResult> {
  const client: Client = {
    baseUrl: input.web.url,
    headersFor: () => ({ authorization: `Bearer ${input.apiKey}` }),
  };
  let settled = false;
  void input.until.finally(() => {
    settled = true;
  });
  const samples = new Map(
    input.cases.map((c) => [c.id, { samples: [] as number[], errors: 0, firstError: null as string | null }]),
  );
  let passes = 0;
  do {
    const runs = await runPass(client, input.cases, {
      name: `API ${input.phase}`,
      requests: input.requests,
      concurrency: 1,
      warmup: passes === 0 ? 3 : 0,
    });
    for (const run of runs) {
      const into = samples.get(run.caseId);
      if (!into) continue;
      into.samples.push(...run.samples);
      into.errors += run.errors;
      into.firstError ??= run.firstError;
    }
    passes += 1;
  } while (!settled);
  return {
    phase: input.phase,
    passes,
    cases: input.cases.map((c) => {
      const got = samples.get(c.id);
      return {
        caseId: c.id,
        label: c.label,
        summary: got ? summarizeLatencies(got.samples, got.errors) : null,
        firstError: got?.firstError ?? null,
      };
    }),
  };
}

/** Worst p99 of the single-object calls over the phases, and whether every one stayed within 1 s without errors. */
export function apiSloVerdict(results: readonly ApiPhaseResult[]): {
  worstP99Ms: number | null;
  met: boolean;
} {
  const singles = results.flatMap((r) => r.cases.filter((c) => ["node", "site", "app"].includes(c.caseId)));
  if (singles.length === 0 || singles.some((c) => c.summary === null))
    return { worstP99Ms: null, met: false };
  const worst = Math.max(...singles.map((c) => (c.summary as CaseSummary).p99));
  const met = worst <= API_SLO_MS && singles.every((c) => (c.summary as CaseSummary).errors === 0);
  return { worstP99Ms: worst, met };
}
