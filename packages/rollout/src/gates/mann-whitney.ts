/**
 * The Mann–Whitney U test (Wilcoxon rank-sum) with the normal approximation, a continuity
 * correction and the tie correction — what scipy's `mannwhitneyu(x, y, method="asymptotic")`
 * computes, and what Kayenta's judge runs on per-node samples. No well-kept JavaScript library
 * ships it with ties and p-values (simple-statistics has the rank sum only), so it is written
 * here and tested against scipy's numbers; the normal tail comes from simple-statistics.
 */
import { errorFunction } from "simple-statistics";

/** Which difference the test looks for: `greater` = x tends to be larger than y. */
export type Alternative = "two-sided" | "greater" | "less";

export interface MannWhitneyResult {
  /** U of x: the number of (x, y) pairs with x > y, ties counting one half. */
  u: number;
  /** Standard score of U under the null hypothesis (continuity-corrected); 0 when all values tie. */
  z: number;
  /** Probability of a U at least this extreme if x and y came from one distribution. */
  pValue: number;
}

/** Ranks from 1, ties sharing their average rank; also the tie term Σ(t³ − t) over tie groups. */
function rank(values: readonly number[]): { ranks: number[]; tieTerm: number } {
  const order = values.map((value, index) => ({ value, index })).sort((a, b) => a.value - b.value);
  const ranks = new Array<number>(values.length);
  let tieTerm = 0;
  for (let start = 0; start < order.length; ) {
    let end = start + 1;
    while (end < order.length && order[end]?.value === order[start]?.value) end++;
    const average = (start + 1 + end) / 2;
    for (let k = start; k < end; k++) ranks[order[k]?.index as number] = average;
    const t = end - start;
    tieTerm += t * t * t - t;
    start = end;
  }
  return { ranks, tieTerm };
}

/** Upper tail of the standard normal distribution. */
export function normalSurvival(z: number): number {
  return 0.5 * (1 - errorFunction(z / Math.SQRT2));
}

export function mannWhitneyU(
  x: readonly number[],
  y: readonly number[],
  alternative: Alternative = "two-sided",
): MannWhitneyResult {
  const n1 = x.length;
  const n2 = y.length;
  if (n1 === 0 || n2 === 0) throw new RangeError("both samples need at least one value");
  if ([...x, ...y].some((v) => !Number.isFinite(v))) throw new RangeError("samples must be finite numbers");
  const n = n1 + n2;
  const { ranks, tieTerm } = rank([...x, ...y]);
  let rankSumX = 0;
  for (let i = 0; i < n1; i++) rankSumX += ranks[i] as number;
  const u1 = rankSumX - (n1 * (n1 + 1)) / 2;
  const u2 = n1 * n2 - u1;
  const mean = (n1 * n2) / 2;
  const variance = ((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1)));
  // Every value tied: no evidence of any difference.
  if (variance <= 0) return { u: u1, z: 0, pValue: 1 };
  const sd = Math.sqrt(variance);
  const u = alternative === "greater" ? u1 : alternative === "less" ? u2 : Math.max(u1, u2);
  const z = (u - mean - 0.5) / sd;
  const tail = normalSurvival(z);
  const pValue = Math.min(1, Math.max(0, alternative === "two-sided" ? 2 * tail : tail));
  return { u: u1, z, pValue };
}
