/**
 * Reading Mimir for metric gates: PromQL instant and range queries over HTTP, always with
 * X-Scope-OrgID = the rollout's organization (the only tenant a gate can read; never a
 * parameter a person passes). Used by the controller (judging) and the API (validating PromQL
 * before a rollout starts).
 */
import { z } from "zod";

export interface MimirReader {
  /** Mimir's base URL (the Prometheus API is under `/prometheus`). */
  url: string;
  timeoutMs?: number;
}

/** Mimir did not answer, or not as expected: not the query's fault (retry later). */
export class MimirUnavailableError extends Error {
  override name = "MimirUnavailableError";
}

/** Mimir refused the query itself (`bad_data`: it does not parse; `execution`: it cannot run). */
export class PromqlError extends Error {
  override name = "PromqlError";
}

const sample = z.tuple([z.number(), z.string()]);
const answer = z.discriminatedUnion("status", [
  z.object({
    status: z.literal("success"),
    data: z.object({
      resultType: z.string(),
      result: z.unknown(),
    }),
  }),
  z.object({ status: z.literal("error"), errorType: z.string(), error: z.string() }),
]);
const vector = z.array(z.object({ metric: z.record(z.string(), z.string()), value: sample }));
const matrix = z.array(z.object({ metric: z.record(z.string(), z.string()), values: z.array(sample) }));

async function call(
  mimir: MimirReader,
  tenant: string,
  path: string,
  params: Record<string, string>,
): Promise<{ resultType: string; result: unknown }> {
  let response: Response;
  try {
    response = await fetch(new URL(`/prometheus/api/v1/${path}`, mimir.url), {
      method: "POST",
      headers: { "X-Scope-OrgID": tenant, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(params),
      signal: AbortSignal.timeout(mimir.timeoutMs ?? 15_000),
    });
  } catch (error) {
    throw new MimirUnavailableError(`Mimir unreachable: ${error instanceof Error ? error.message : error}`);
  }
  const text = await response.text();
  let parsed: z.infer<typeof answer>;
  try {
    parsed = answer.parse(JSON.parse(text));
  } catch {
    throw new MimirUnavailableError(`Mimir answered ${response.status}: ${text.slice(0, 300)}`);
  }
  if (parsed.status === "error") {
    // bad_data: it does not parse; execution: it cannot run (e.g. mismatched operands). Both are
    // the query's fault; timeouts, limits and internal errors are Mimir's.
    if (parsed.errorType === "bad_data" || parsed.errorType === "execution")
      throw new PromqlError(parsed.error);
    throw new MimirUnavailableError(`Mimir answered ${response.status} ${parsed.errorType}: ${parsed.error}`);
  }
  return parsed.data;
}

/** An instant query at `at` (ms); one value per series. Refuses a result that is not a vector. */
export async function queryVector(
  mimir: MimirReader,
  tenant: string,
  query: string,
  at: number,
): Promise<Array<{ labels: Record<string, string>; value: number }>> {
  const data = await call(mimir, tenant, "query", { query, time: String(at / 1000) });
  if (data.resultType !== "vector") {
    throw new PromqlError(`must give one value per node (an instant vector), not a ${data.resultType}`);
  }
  return vector.parse(data.result).map((s) => ({ labels: s.metric, value: Number(s.value[1]) }));
}

/** A range query; samples as [ms, value]. */
export async function queryMatrix(
  mimir: MimirReader,
  tenant: string,
  query: string,
  range: { from: number; to: number; stepSeconds: number },
): Promise<Array<{ labels: Record<string, string>; points: Array<[number, number]> }>> {
  const data = await call(mimir, tenant, "query_range", {
    query,
    start: String(range.from / 1000),
    end: String(range.to / 1000),
    step: String(range.stepSeconds),
  });
  return matrix.parse(data.result).map((s) => ({
    labels: s.metric,
    points: s.values.map(([at, value]) => [Math.round(at * 1000), Number(value)] as [number, number]),
  }));
}
