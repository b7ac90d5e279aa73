import { type BenchCase, TARGETS } from "./cases.js";
import { timedRequest } from "./http.js";
import { type CaseSummary, summarizeLatencies } from "./latency.js";
import { type Client, callCase } from "./measure.js";

/**
 * Tenant fairness (issue 8 #15): one organization's script hammers the node list with its API key
 * while another organization's console and integration are measured. The victim's cases run
 * sequentially (a person clicking, a script paging) and are judged against the same API p99 ≤ 1 s
 * target as the quiet passes. The aggressor never honours Retry-After: it is the hostile case.
 */

/**
 * The victim calls at most 20 times a second: a person in the console or a polite integration,
 * well inside its own API key's and organization's rates, so every 429 it could get is unfair.
 */
export const VICTIM_INTERVAL_MS = 50;

export interface FairnessScenario {
  /** What the console ran with (the report names it): limits and queueing on or off. */
  name: string;
  label: string;
  /** Environment the console is (re)started with for this scenario. */
  consoleEnv: Record<string, string>;
  /** Aggressor loops in flight; 0 = the victim alone (the quiet reference). */
  burstConcurrency: number;
}

export interface FairnessCaseResult {
  caseId: string;
  summary: CaseSummary | null;
  firstError: string | null;
}

export interface AggressorResult {
  requests: number;
  ok: number;
  /** Answered 429 (with a Retry-After header: counted apart when missing). */
  limited: number;
  limitedWithoutRetryAfter: number;
  otherErrors: number;
  firstOtherError: string | null;
  /** Answers per second over the scenario, by kind. */
  okPerSecond: number;
  limitedPerSecond: number;
  aggressorP50Ms: number | null;
}

export interface FairnessScenarioResult {
  name: string;
  label: string;
  burstConcurrency: number;
  consoleEnv: Record<string, string>;
  victim: FairnessCaseResult[];
  aggressor: AggressorResult | null;
}

export interface Aggressor {
  /** The aggressor's request (its own organization's API key). */
  request: () => { url: string; method: string; headers: Record<string, string>; body?: string };
}

/**
 * Limits as a production console runs them (apps/web/src/env.ts defaults; the slots are left
 * unset, so the console sizes them to the cores: 4 on 2 cores, 2 per organization).
 */
export const PRODUCTION_LIMITS: Record<string, string> = {
  EDGEFLEET_ORG_RATE: "200",
  EDGEFLEET_ORG_BURST: "400",
  EDGEFLEET_API_KEY_RATE: "50",
  EDGEFLEET_API_KEY_BURST: "100",
};

/** No limits and no queueing to speak of: what the console did before issue 8 #15. */
export const NO_FAIRNESS: Record<string, string> = {
  EDGEFLEET_API_CONCURRENCY: "1024",
  EDGEFLEET_API_MAX_PER_ORG: "1024",
  EDGEFLEET_ORG_RATE: "1000000",
  EDGEFLEET_ORG_BURST: "1000000",
  EDGEFLEET_API_KEY_RATE: "1000000",
  EDGEFLEET_API_KEY_BURST: "1000000",
};

export function fairnessScenarios(burstConcurrency: number): FairnessScenario[] {
  return [
    {
      name: "quiet",
      label: "victim alone (production limits)",
      consoleEnv: PRODUCTION_LIMITS,
      burstConcurrency: 0,
    },
    {
      name: "burst-fair",
      label: `aggressor with ${burstConcurrency} in flight, production limits and fair queueing`,
      consoleEnv: PRODUCTION_LIMITS,
      burstConcurrency,
    },
    {
      name: "burst-unlimited",
      label: `aggressor with ${burstConcurrency} in flight, no limits, no queueing (before #15)`,
      consoleEnv: NO_FAIRNESS,
      burstConcurrency,
    },
  ];
}

/**
 * Runs the victim's cases one after another (`requests` each, sequential) while `burstConcurrency`
 * aggressor loops call as fast as answers come back; the aggressor starts first and gets a second
 * to fill the server's queue before the victim is timed.
 */
export async function runFairnessScenario(
  scenario: FairnessScenario,
  victimClient: Client,
  victimCases: readonly BenchCase[],
  aggressor: Aggressor,
  requests: number,
): Promise<FairnessScenarioResult> {
  let stopping = false;
  const tally = {
    requests: 0,
    ok: 0,
    limited: 0,
    limitedWithoutRetryAfter: 0,
    otherErrors: 0,
    firstOtherError: null as string | null,
    okMs: [] as number[],
  };
  const loop = async () => {
    while (!stopping) {
      const request = aggressor.request();
      tally.requests += 1;
      try {
        const response = await timedRequest(request.url, {
          method: request.method,
          headers: request.headers,
          ...(request.body !== undefined ? { body: request.body } : {}),
          timeoutMs: 30_000,
        });
        if (response.status === 200) {
          tally.ok += 1;
          tally.okMs.push(response.totalMs);
        } else if (response.status === 429) {
          tally.limited += 1;
          if (!response.headers["retry-after"]) tally.limitedWithoutRetryAfter += 1;
        } else {
          tally.otherErrors += 1;
          tally.firstOtherError ??= `HTTP ${response.status}: ${response.body.slice(0, 200)}`;
        }
      } catch (error) {
        tally.otherErrors += 1;
        tally.firstOtherError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  const loops = Array.from({ length: scenario.burstConcurrency }, loop);
  const started = performance.now();
  if (scenario.burstConcurrency > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
  const victim: FairnessCaseResult[] = [];
  try {
    for (const bench of victimCases) {
      const samples: number[] = [];
      let errors = 0;
      let firstError: string | null = null;
      for (let i = 0; i < requests; i++) {
        const due = performance.now() + VICTIM_INTERVAL_MS;
        try {
          const response = await callCase(victimClient, bench, i);
          samples.push(response.totalMs);
        } catch (error) {
          errors += 1;
          firstError ??= error instanceof Error ? error.message : String(error);
        }
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      victim.push({ caseId: bench.id, summary: summarizeLatencies(samples, errors), firstError });
    }
  } finally {
    stopping = true;
    await Promise.all(loops);
  }
  const seconds = (performance.now() - started) / 1000;
  const okSorted = [...tally.okMs].sort((a, b) => a - b);
  return {
    name: scenario.name,
    label: scenario.label,
    burstConcurrency: scenario.burstConcurrency,
    consoleEnv: scenario.consoleEnv,
    victim,
    aggressor:
      scenario.burstConcurrency === 0
        ? null
        : {
            requests: tally.requests,
            ok: tally.ok,
            limited: tally.limited,
            limitedWithoutRetryAfter: tally.limitedWithoutRetryAfter,
            otherErrors: tally.otherErrors,
            firstOtherError: tally.firstOtherError,
            okPerSecond: tally.ok / seconds,
            limitedPerSecond: tally.limited / seconds,
            aggressorP50Ms: okSorted.length ? (okSorted[Math.floor(okSorted.length / 2)] as number) : null,
          },
  };
}

/** Whether every victim case held the API target (p99 ≤ 1 s) with no wrong answers. */
export function victimHeld(result: FairnessScenarioResult): boolean {
  const target = TARGETS["REST API"];
  return result.victim.every(
    (run) => run.summary !== null && run.summary.errors === 0 && run.summary.p99 <= target.ms,
  );
}
