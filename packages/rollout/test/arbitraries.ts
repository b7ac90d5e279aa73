/** fast-check generators of fleets and strategies. */
import fc from "fast-check";
import {
  type RolloutStrategy,
  type RolloutStrategyInput,
  rolloutStrategySchema,
  type TargetNode,
  WEEKDAYS,
} from "../src";
import { NEW, OLD } from "./fixtures";

const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"];
export const SITE_IDS = ["site-1", "site-2", "site-3", "site-4"];
const SELECTORS = ["tier=canary", "tier!=canary", "env in (prod,staging)", "gpu", "!gpu", ""];

/** minNodes..maxNodes nodes on up to four sites (and some site-less), in arbitrary order. */
export function fleetArb(maxNodes = 60, minNodes = 0): fc.Arbitrary<TargetNode[]> {
  return fc
    .record({
      zones: fc.array(fc.constantFrom(...ZONES), { minLength: SITE_IDS.length, maxLength: SITE_IDS.length }),
      specs: fc.array(
        fc.record({
          site: fc.integer({ min: 0, max: SITE_IDS.length }), // SITE_IDS.length = no site
          tier: fc.constantFrom("canary", "prod", undefined),
          env: fc.constantFrom("prod", "staging", "dev"),
          gpu: fc.boolean(),
          online: fc.constantFrom(true, true, true, false),
          version: fc.constantFrom(OLD, OLD, OLD, NEW, null),
        }),
        { minLength: minNodes, maxLength: maxNodes },
      ),
    })
    .chain(({ zones, specs }) => {
      const built = specs.map((spec, i): TargetNode => {
        const siteId = SITE_IDS[spec.site] ?? null;
        const labels: Record<string, string> = { env: spec.env };
        if (spec.tier) labels.tier = spec.tier;
        if (spec.gpu) labels.gpu = "true";
        return {
          id: `node-${String(i).padStart(3, "0")}`,
          name: `node ${i}`,
          siteId,
          siteTimeZone: siteId === null ? null : (zones[spec.site] ?? "UTC"),
          labels,
          online: spec.online,
          currentVersionId: spec.version,
        };
      });
      return fc.shuffledSubarray(built, { minLength: built.length, maxLength: built.length });
    });
}

const policyArb = fc.record(
  {
    successThreshold: fc.constantFrom(0, 50, 80, 100),
    timeoutSeconds: fc.constantFrom(60, 600),
    offline: fc.constantFrom("skip", "wait", "fail"),
    waitSeconds: fc.constantFrom(30, 300),
    afterWait: fc.constantFrom("skip", "fail"),
    pauseAfter: fc.constantFrom("none", "approval", { seconds: 120 }),
  },
  { requiredKeys: [] },
);

const sizeArb = fc.oneof(
  fc.record({ count: fc.integer({ min: 1, max: 20 }) }),
  fc.record({ percent: fc.integer({ min: 1, max: 100 }) }),
);

const batchArb = fc
  .tuple(
    fc.oneof(
      fc.record({ count: fc.integer({ min: 1, max: 25 }) }),
      fc.record({ percent: fc.constantFrom(1, 5, 10, 25, 33.3, 50) }),
      fc.record({ selector: fc.constantFrom(...SELECTORS), limit: fc.option(sizeArb, { nil: undefined }) }),
    ),
    policyArb,
  )
  .map(([selection, policy]) => {
    const batch: Record<string, unknown> = { ...selection, ...policy };
    if (batch.limit === undefined) delete batch.limit;
    return batch;
  });

const windowArb = fc.record({
  days: fc.uniqueArray(fc.constantFrom(...WEEKDAYS), { minLength: 1, maxLength: 7 }),
  start: fc.constantFrom("00:00", "02:00", "09:30", "22:00"),
  end: fc.constantFrom("03:00", "06:00", "18:00", "24:00"),
});

/** Valid strategies: random batches, policies, budgets and windows. */
export function strategyArb(options: { windows?: boolean } = {}): fc.Arbitrary<RolloutStrategy> {
  return fc
    .record(
      {
        batches: fc.array(batchArb, { minLength: 1, maxLength: 4 }),
        defaults: policyArb,
        disruptionBudget: fc.record(
          {
            maxUpdatingPerSite: sizeArb,
            sites: fc.dictionary(fc.constantFrom(...SITE_IDS), sizeArb, { maxKeys: 2 }),
          },
          { requiredKeys: ["maxUpdatingPerSite"] },
        ),
        maintenanceWindows: fc.record(
          {
            default: fc.array(windowArb, { minLength: 1, maxLength: 2 }),
            sites: fc.dictionary(
              fc.constantFrom(...SITE_IDS),
              fc.array(windowArb, { minLength: 1, maxLength: 2 }),
              {
                maxKeys: 2,
              },
            ),
          },
          { requiredKeys: [] },
        ),
        onBatchFailure: fc.constantFrom("pause", "rollback"),
      },
      { requiredKeys: ["batches"] },
    )
    .map((input) => {
      if (options.windows === false) delete input.maintenanceWindows;
      return rolloutStrategySchema.safeParse(input as RolloutStrategyInput);
    })
    .filter((result) => result.success)
    .map((result) => result.data as RolloutStrategy);
}
