import { Progress } from "../progress.js";
import type { BenchCase } from "./cases.js";
import { timedRequest } from "./http.js";

/**
 * Runs each case on its own: a warm-up (not counted), then `requests` calls with `concurrency`
 * in flight (1 = sequential, for latency; 8 = a busy console). Every answer is checked; a
 * wrong one counts as an error and its time is not a sample.
 */

export interface PassOptions {
  name: string;
  requests: number;
  concurrency: number;
  warmup: number;
}

export interface CaseRun {
  caseId: string;
  samples: number[];
  errors: number;
  firstError: string | null;
  /** Requests per second over the case's measured span. */
  throughput: number;
}

export interface Client {
  baseUrl: string;
  /** Headers by group: the API key for REST, the session cookie for tRPC and pages. */
  headersFor: (bench: BenchCase) => Record<string, string>;
}

export async function callCase(client: Client, bench: BenchCase, i: number) {
  const request = bench.request(i);
  const headers = { ...client.headersFor(bench) };
  if (request.body !== undefined) headers["content-type"] = "application/json";
  const response = await timedRequest(`${client.baseUrl}${request.path}`, {
    method: request.method,
    headers,
    ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
  });
  bench.check(response);
  return response;
}

export async function runPass(
  client: Client,
  cases: readonly BenchCase[],
  options: PassOptions,
): Promise<CaseRun[]> {
  const runs: CaseRun[] = [];
  const progress = new Progress(options.name, cases.length * options.requests);
  let done = 0;
  for (const bench of cases) {
    for (let i = 0; i < options.warmup; i++) await callCase(client, bench, i).catch(() => undefined);
    const run: CaseRun = { caseId: bench.id, samples: [], errors: 0, firstError: null, throughput: 0 };
    let next = 0;
    const started = performance.now();
    const worker = async () => {
      while (next < options.requests) {
        const i = next++;
        try {
          const response = await callCase(client, bench, i);
          run.samples.push(bench.timing === "ttfb" ? response.ttfbMs : response.totalMs);
        } catch (error) {
          run.errors += 1;
          run.firstError ??= error instanceof Error ? error.message : String(error);
        }
        done += 1;
        progress.update(done, `${bench.id}${run.errors ? `  errors: ${run.errors}` : ""}`);
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    run.throughput = (options.requests * 1000) / (performance.now() - started);
    runs.push(run);
  }
  const errors = runs.reduce((sum, run) => sum + run.errors, 0);
  progress.finish(
    `${cases.length} cases × ${options.requests} requests, ${options.concurrency} in flight${errors ? `, ${errors} errors` : ""}`,
  );
  return runs;
}
