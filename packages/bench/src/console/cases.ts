import type { TimedResponse } from "./http.js";

/**
 * The requests the benchmark measures: the REST API with an API key (scripts and integrations),
 * tRPC with a session cookie (what the console's pages call), and the pages themselves (time to
 * first byte of the server-rendered HTML). Pure: the runner does the I/O.
 */

export type CaseGroup = "REST API" | "tRPC (console)" | "page";

export interface CaseRequest {
  path: string;
  method: "GET" | "POST";
  body?: unknown;
}

export interface BenchCase {
  id: string;
  group: CaseGroup;
  /** What a reader sees in the report. */
  label: string;
  /** The request for the i-th call (cases that rotate through node ids use i). */
  request: (i: number) => CaseRequest;
  /** Throws when the response is not the right answer (checked on every response). */
  check: (response: TimedResponse) => void;
  /** API cases are timed to the last byte; pages to the first byte (TTFB). */
  timing: "total" | "ttfb";
}

export interface Target {
  percentile: 95 | 99;
  ms: number;
  source: string;
}

/** Issue 4: API p99 ≤ 1 s (the Kubernetes API SLO), pages p95 ≤ 500 ms. */
export const TARGETS: Record<CaseGroup, Target> = {
  "REST API": { percentile: 99, ms: 1000, source: "API p99 ≤ 1 s" },
  "tRPC (console)": { percentile: 99, ms: 1000, source: "API p99 ≤ 1 s" },
  page: { percentile: 95, ms: 500, source: "pages p95 ≤ 500 ms" },
};

export interface NodeListInput {
  limit?: number;
  cursor?: string | null;
  search?: string;
  status?: string;
  selector?: string;
  sort?: { field: "name" | "status" | "lastSeenAt" | "agentVersion"; direction: "asc" | "desc" };
}

export interface ListItem {
  id: string;
  name: string;
  site: string | null;
  labels: Record<string, string>;
}

/** A 200 answer's JSON body (anything else throws: a wrong answer, not a sample). */
export function json<T>(response: TimedResponse): T {
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${response.body.slice(0, 200)}`);
  return JSON.parse(response.body) as T;
}

/** tRPC's answer to a single (unbatched) query, superjson-encoded. */
export function trpcData<T>(response: TimedResponse): T {
  return json<{ result: { data: { json: T } } }>(response).result.data.json;
}

/** A GET of one tRPC query, as the console's link sends it (superjson: `{ json, meta }`). */
export function trpcPath(procedure: string, input?: unknown, meta?: unknown): string {
  if (input === undefined) return `/api/trpc/${procedure}`;
  const encoded = JSON.stringify(meta ? { json: input, meta } : { json: input });
  return `/api/trpc/${procedure}?input=${encodeURIComponent(encoded)}`;
}

/** What every node-list case asserts about its page, beyond HTTP 200. */
export interface ListExpectation {
  /** Exact page size (the query matches more rows than a page). */
  items: number;
  /** Holds for every item. */
  every?: (item: ListItem) => boolean;
}

export function checkList(items: ListItem[], expected: ListExpectation): void {
  if (items.length !== expected.items)
    throw new Error(`expected ${expected.items} nodes, got ${items.length}`);
  const wrong = expected.every ? items.find((item) => !expected.every?.(item)) : undefined;
  if (wrong) throw new Error(`node ${wrong.name} does not match the filter: ${JSON.stringify(wrong.labels)}`);
}

export interface ListCase {
  id: string;
  label: string;
  input: NodeListInput;
  expect: ListExpectation;
}

/**
 * The node-list queries, each asked through REST and tRPC. Deep cursors are fetched by paging
 * before measuring (the cursor is opaque to clients).
 */
export function listCases(deep: { byName: string; regionByLastSeen: string; depth: number }): ListCase[] {
  const page = 100;
  const inRegion = (item: ListItem) => ["eu-west", "eu-north"].includes(item.labels.region ?? "");
  return [
    { id: "first-page", label: "first page, by name", input: { limit: page }, expect: { items: page } },
    {
      id: "selector-site",
      label: "selector site=plant-7,tier!=canary",
      input: { limit: page, selector: "site=plant-7,tier!=canary" },
      expect: {
        items: page,
        every: (item) => item.labels.site === "plant-7" && item.labels.tier !== "canary",
      },
    },
    {
      id: "selector-region",
      label: "selector region in (eu-west,eu-north)",
      input: { limit: page, selector: "region in (eu-west,eu-north)" },
      expect: { items: page, every: inRegion },
    },
    {
      id: "search-site",
      label: 'search "plant-17" (site names)',
      input: { limit: page, search: "plant-17" },
      expect: {
        items: page,
        every: (item) => (item.site ?? "").includes("plant-17") || item.name.includes("plant-17"),
      },
    },
    {
      id: "search-name",
      label: 'search "edge-0424" (node names)',
      input: { limit: page, search: "edge-0424" },
      expect: { items: page, every: (item) => item.name.includes("edge-0424") },
    },
    {
      id: "sort-last-seen",
      label: "sort by last seen, newest first",
      input: { limit: page, sort: { field: "lastSeenAt", direction: "desc" } },
      expect: { items: page },
    },
    {
      id: "deep-name",
      label: `cursor ${deep.depth.toLocaleString("en")} nodes deep, by name`,
      input: { limit: page, cursor: deep.byName },
      expect: { items: page },
    },
    {
      id: "deep-region-last-seen",
      label: `region selector, by last seen, cursor ${deep.depth.toLocaleString("en")} deep`,
      input: {
        limit: page,
        selector: "region in (eu-west,eu-north)",
        sort: { field: "lastSeenAt", direction: "desc" },
        cursor: deep.regionByLastSeen,
      },
      expect: { items: page, every: inRegion },
    },
  ];
}

/** GET /nodes/counts, whose total must be the organization's node count. */
export function restCountsCase(expectedTotal: number): BenchCase {
  return {
    id: "rest-counts",
    group: "REST API",
    label: "node counts by status",
    request: () => ({ path: "/api/v1/nodes/counts", method: "GET" }),
    check: (response) => {
      const total = json<{ total: number }>(response).total;
      if (total !== expectedTotal) throw new Error(`counts say ${total} nodes, expected ${expectedTotal}`);
    },
    timing: "total",
  };
}

export interface CaseContext {
  /** Node ids of the large organization to rotate through (detail cases). */
  nodeIds: string[];
  /** Nodes of the large organization (what counts must say). */
  expectedTotal: number;
  deep: { byName: string; regionByLastSeen: string; depth: number };
  /** REST has a node-detail path (GET /nodes/{id}) in this build's OpenAPI document. */
  restNodeDetail: boolean;
  now: () => number;
}

export function buildCases(context: CaseContext): BenchCase[] {
  const nodeId = (i: number) => context.nodeIds[i % context.nodeIds.length] as string;
  const lists = listCases(context.deep);
  const cases: BenchCase[] = [];
  for (const list of lists) {
    cases.push({
      id: `rest-list-${list.id}`,
      group: "REST API",
      label: `node list: ${list.label}`,
      request: () => ({ path: "/api/v1/nodes/search", method: "POST", body: list.input }),
      check: (response) => checkList(json<{ items: ListItem[] }>(response).items, list.expect),
      timing: "total",
    });
  }
  cases.push(restCountsCase(context.expectedTotal));
  if (context.restNodeDetail)
    cases.push({
      id: "rest-node-detail",
      group: "REST API",
      label: "node detail",
      request: (i) => ({ path: `/api/v1/nodes/${nodeId(i)}`, method: "GET" }),
      check: (response) => {
        if (json<{ id: string }>(response).id === undefined) throw new Error("no node in the answer");
      },
      timing: "total",
    });
  for (const list of lists.filter((l) => ["first-page", "selector-site", "deep-name"].includes(l.id))) {
    cases.push({
      id: `trpc-list-${list.id}`,
      group: "tRPC (console)",
      label: `node.list: ${list.label}`,
      request: () => ({ path: trpcPath("node.list", list.input), method: "GET" }),
      check: (response) => checkList(trpcData<{ items: ListItem[] }>(response).items, list.expect),
      timing: "total",
    });
  }
  cases.push(
    {
      id: "trpc-counts",
      group: "tRPC (console)",
      label: "node.counts (fleet page)",
      request: () => ({ path: trpcPath("node.counts"), method: "GET" }),
      check: (response) => {
        const total = trpcData<{ total: number }>(response).total;
        if (total !== context.expectedTotal)
          throw new Error(`counts say ${total}, expected ${context.expectedTotal}`);
      },
      timing: "total",
    },
    {
      id: "trpc-breakdown",
      group: "tRPC (console)",
      label: "node.breakdown (fleet page)",
      request: () => ({ path: trpcPath("node.breakdown"), method: "GET" }),
      check: (response) => {
        trpcData<unknown>(response);
      },
      timing: "total",
    },
    {
      id: "trpc-sites",
      group: "tRPC (console)",
      label: "site.list with node counts (fleet page)",
      request: () => ({ path: trpcPath("site.list"), method: "GET" }),
      check: (response) => {
        trpcData<unknown>(response);
      },
      timing: "total",
    },
    {
      id: "trpc-node-detail",
      group: "tRPC (console)",
      label: "node.byId (node page)",
      request: (i) => ({ path: trpcPath("node.byId", { id: nodeId(i) }), method: "GET" }),
      check: (response) => {
        const apps = trpcData<{ apps: unknown[] }>(response).apps;
        if (!Array.isArray(apps) || apps.length === 0) throw new Error("node detail without app instances");
      },
      timing: "total",
    },
    {
      id: "trpc-node-charts",
      group: "tRPC (console)",
      label: "metrics.nodeSeries, last hour (node page charts, Mimir)",
      request: (i) => {
        const to = context.now();
        const range = { from: new Date(to - 3_600_000).toISOString(), to: new Date(to).toISOString() };
        const meta = { values: { "range.from": ["Date"], "range.to": ["Date"] } };
        return { path: trpcPath("metrics.nodeSeries", { nodeId: nodeId(i), range }, meta), method: "GET" };
      },
      check: (response) => {
        trpcData<unknown>(response);
      },
      timing: "total",
    },
  );
  const page = (id: string, label: string, path: (i: number) => string): BenchCase => ({
    id,
    group: "page",
    label,
    request: (i) => ({ path: path(i), method: "GET" }),
    check: (response) => {
      if (response.status !== 200) throw new Error(`HTTP ${response.status} (signed out?)`);
    },
    timing: "ttfb",
  });
  cases.push(
    page("page-fleet", "/fleet", () => "/fleet"),
    page("page-nodes", "/nodes", () => "/nodes"),
    page("page-node", "/nodes/<id>", (i) => `/nodes/${nodeId(i)}`),
  );
  return cases;
}
