import type { MachineInfo } from "../machine.js";
import type { CaseGroup } from "./cases.js";
import type { FairnessScenarioResult } from "./fairness.js";
import type { CaseSummary } from "./latency.js";
import type { SeedResult } from "./seed.js";

/** Everything one run of the console benchmark measured (var/load/results.json); the report is rendered from it. */
export interface ConsoleBenchResults {
  command: string;
  commit: string;
  machine: MachineInfo;
  config: {
    nodes: number;
    appsPerNode: number;
    sites: number;
    secondOrganizationNodes: number;
    requests: number;
    concurrentRequests: number;
    concurrency: number;
    warmup: number;
    deepDepth: number;
  };
  seed: SeedResult;
  setupSeconds: { stack: number; build: number | null; seed: number };
  cases: Array<{ id: string; group: CaseGroup; label: string; timing: "total" | "ttfb" }>;
  passes: PassResult[];
  /** 1-minute load average before and after the measuring (the machine is shared). */
  loadAverage: { before: number; after: number };
  /** Waited this long for the CPU lock (another benchmark was measuring). */
  lockWaitSeconds: number;
  explains: ExplainResult[];
  /** Tenant fairness (issue 8 #15): one organization's burst against another's calls; absent in older runs. */
  fairness?: { victimIntervalMs: number; scenarios: FairnessScenarioResult[] } | null;
  /** An earlier run's summaries, for a before/after table (--baseline). */
  baseline: { commit: string; label: string; passes: PassResult[] } | null;
  problems: string[];
  notes: string[];
}

export interface PassResult {
  name: string;
  concurrency: number;
  runs: Array<{
    caseId: string;
    summary: CaseSummary | null;
    throughput: number;
    firstError: string | null;
    /** Value at each whole percentile (chart). */
    distribution: Array<{ percentile: number; ms: number }>;
  }>;
}

export interface ExplainResult {
  caseId: string;
  why: string;
  requests: number;
  statements: Array<{ sql: string; callsPerRequest: number; meanMs: number; maxMs: number }>;
  explained: { sql: string; plan: string } | null;
}
