/**
 * The organization's service level indicators next to their objectives (issue 16), read from the
 * series the web server and the gateway write to Mimir for it (@edgefleet/alerts slo.ts). The
 * tenant is always the caller's organization: an organization only ever sees its own figures.
 */
import { SLO_OBJECTIVES, sloQueries } from "@edgefleet/alerts";
import { queryVector } from "@edgefleet/rollout-store";
import { z } from "zod";

export const SLO_WINDOWS = ["1h", "6h", "24h", "7d"] as const;

export const sloInput = z.object({ window: z.enum(SLO_WINDOWS).default("1h") }).default({ window: "1h" });

const indicator = z.object({
  key: z.enum(["apiP99", "desiredToRunningP99", "connectToOnlineP99", "bytesPerNodePerMonth"]),
  /** null: no data in the window (nothing happened that the indicator measures). */
  value: z.number().nullable(),
  objective: z.number(),
  unit: z.enum(["seconds", "bytes"]),
  /** Events the value stands on (calls, instances, connects); null for rates. */
  events: z.number().nullable(),
  met: z.boolean().nullable(),
});
export type SloIndicator = z.infer<typeof indicator>;

export const sloOutput = z.object({ window: z.enum(SLO_WINDOWS), indicators: z.array(indicator) });
export type SloSummary = z.infer<typeof sloOutput>;

async function scalar(mimirUrl: string, organizationId: string, query: string): Promise<number | null> {
  const [first] = await queryVector({ url: mimirUrl }, organizationId, query, Date.now());
  return first && Number.isFinite(first.value) ? first.value : null;
}

export async function readSlo(
  mimirUrl: string,
  organizationId: string,
  window: (typeof SLO_WINDOWS)[number],
): Promise<SloSummary> {
  const q = sloQueries(window);
  const read = (query: string) => scalar(mimirUrl, organizationId, query);
  const [apiP99, apiCalls, d2r, d2rCount, c2o, c2oCount, bytes] = await Promise.all([
    read(q.apiP99),
    read(q.apiCalls),
    read(q.desiredToRunningP99),
    read(q.desiredToRunningCount),
    read(q.connectToOnlineP99),
    read(q.connectToOnlineCount),
    read(q.bytesPerNodePerMonth),
  ]);
  const seconds = (
    key: SloIndicator["key"],
    value: number | null,
    objective: number,
    events: number | null,
  ): SloIndicator => ({
    key,
    value,
    objective,
    unit: "seconds",
    events: events === null ? null : Math.round(events),
    met: value === null ? null : value <= objective,
  });
  return {
    window,
    indicators: [
      seconds("apiP99", apiP99, SLO_OBJECTIVES.apiP99Seconds, apiCalls),
      seconds("desiredToRunningP99", d2r, SLO_OBJECTIVES.desiredToRunningP99Seconds, d2rCount),
      seconds("connectToOnlineP99", c2o, SLO_OBJECTIVES.connectToOnlineP99Seconds, c2oCount),
      {
        key: "bytesPerNodePerMonth",
        value: bytes,
        objective: SLO_OBJECTIVES.bytesPerNodePerMonth,
        unit: "bytes",
        events: null,
        met: bytes === null ? null : bytes <= SLO_OBJECTIVES.bytesPerNodePerMonth,
      },
    ],
  };
}
