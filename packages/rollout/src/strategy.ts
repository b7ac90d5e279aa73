/**
 * The rollout strategy: how a version moves onto its target, batch by batch. ONE zod schema,
 * used by the API (tRPC input, REST/OpenAPI), the console form and the planner. Parsing fills in
 * the defaults, and the parsed form is what a rollout stores, so that changing a default later
 * never changes a rollout that already exists. Semantics: README.md of this package.
 *
 * Errors name the field: `batches.2.percent`, `maintenanceWindows.sites.<siteId>.0.end`, ...
 */
import { parseSelector, SelectorSyntaxError } from "@edgefleet/selectors";
import { z } from "zod";
import { type Gate, gateActionsSchema, gateSchema } from "./gates/spec";

export const MAX_BATCHES = 50;
export const MAX_TIMEOUT_SECONDS = 7 * 24 * 3600;
export const MAX_PAUSE_SECONDS = 30 * 24 * 3600;
export const MAX_COUNT = 1_000_000;
export const MAX_WINDOWS = 50;
export const MAX_GATES = 20;

/** Weekdays in the order of `Date.getUTCDay()` (0 = Sunday). */
export const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const countValue = z.int().min(1, "must be at least 1").max(MAX_COUNT);
const percentValue = z.number().gt(0, "must be greater than 0").max(100, "must be at most 100");

/**
 * A number of nodes, either absolute or relative: exactly one of `count` or `percent`. One object
 * with two optional fields (not a union) so that an error names `count` or `percent` itself.
 */
export const sizeSchema = z
  .strictObject({ count: countValue.optional(), percent: percentValue.optional() })
  .superRefine((size, ctx) => {
    if (size.count === undefined && size.percent === undefined) {
      ctx.addIssue({ code: "custom", message: "give either count or percent" });
    } else if (size.count !== undefined && size.percent !== undefined) {
      ctx.addIssue({ code: "custom", path: ["percent"], message: "give either count or percent, not both" });
    }
  });
export type Size = z.output<typeof sizeSchema>;

/** A label selector (Kubernetes syntax, see @edgefleet/selectors); the error says where it breaks. */
export const selectorSchema = z.string().superRefine((text, ctx) => {
  try {
    parseSelector(text);
  } catch (error) {
    if (!(error instanceof SelectorSyntaxError)) throw error;
    ctx.addIssue({ code: "custom", message: error.message });
  }
});

export const offlinePolicySchema = z.enum(["skip", "wait", "fail"]);
export type OfflinePolicy = z.output<typeof offlinePolicySchema>;

/** `"none"`, `"approval"` (until a person approves) or `{ seconds }` (a timed pause). */
export const pauseAfterSchema = z.union(
  [z.enum(["none", "approval"]), z.strictObject({ seconds: z.int().min(1).max(MAX_PAUSE_SECONDS) })],
  {
    error: `must be "none", "approval" or { seconds: n } with n a whole number from 1 to ${MAX_PAUSE_SECONDS}`,
  },
);
export type PauseAfter = z.output<typeof pauseAfterSchema>;

/** What can be set per batch and, as the rollout-wide default, in `defaults`. */
const policyFields = {
  /** Percent (0–100) of the batch's counted nodes that must reach `running` on the new version. */
  successThreshold: z.number().min(0, "must be at least 0").max(100, "must be at most 100"),
  /** Seconds a dispatched node has to reach `running` before it counts as failed (timed out). */
  timeoutSeconds: z.int().min(10, "must be at least 10").max(MAX_TIMEOUT_SECONDS),
  /** What a node that is offline when its turn comes means for the batch. */
  offline: offlinePolicySchema,
  /** For `offline: "wait"`: how long the batch waits for offline nodes, from the batch's start. */
  waitSeconds: z.int().min(1, "must be at least 1").max(MAX_TIMEOUT_SECONDS),
  /** For `offline: "wait"`: how a node still offline when the wait is over counts. */
  afterWait: z.enum(["skip", "fail"]),
  /** The pause after this batch succeeded, before the next one starts (never after the last). */
  pauseAfter: pauseAfterSchema,
  /** Metric gates judged once the batch's nodes run the version (issue 11; gates/spec.ts). */
  gates: z
    .array(gateSchema)
    .max(MAX_GATES)
    .superRefine((gates, ctx) => {
      gates.forEach((gate, i) => {
        if (gates.findIndex((g) => g.name === gate.name) !== i)
          ctx.addIssue({
            code: "custom",
            path: [i, "name"],
            message: `gate name ${gate.name} is used twice`,
          });
      });
    }),
};

/** The defaults: every node must make it, 30 minutes each, offline nodes skipped (and revisited). */
export const DEFAULT_POLICY: Readonly<BatchPolicy> = {
  successThreshold: 100,
  timeoutSeconds: 1800,
  offline: "skip",
  waitSeconds: 900,
  afterWait: "skip",
  pauseAfter: "none",
  gates: [],
};

export const batchPolicyDefaultsSchema = z.strictObject({
  successThreshold: policyFields.successThreshold.default(DEFAULT_POLICY.successThreshold),
  timeoutSeconds: policyFields.timeoutSeconds.default(DEFAULT_POLICY.timeoutSeconds),
  offline: policyFields.offline.default(DEFAULT_POLICY.offline),
  waitSeconds: policyFields.waitSeconds.default(DEFAULT_POLICY.waitSeconds),
  afterWait: policyFields.afterWait.default(DEFAULT_POLICY.afterWait),
  pauseAfter: policyFields.pauseAfter.default(DEFAULT_POLICY.pauseAfter),
  gates: policyFields.gates.default([]),
});

/** A batch's policy with every default filled in (what the planner puts in each planned batch). */
export interface BatchPolicy {
  successThreshold: number;
  timeoutSeconds: number;
  offline: OfflinePolicy;
  waitSeconds: number;
  afterWait: "skip" | "fail";
  pauseAfter: PauseAfter;
  gates: Gate[];
}

/**
 * One step of the batch sequence (flightctl's BatchSequence): exactly one of
 * - `count`: that many nodes,
 * - `percent`: that percentage of the nodes the rollout updates (rounded up),
 * - `selector`: the nodes matching a label selector, at most `limit` of them if given.
 * Every batch takes only nodes no earlier batch took. Policy fields override `defaults`.
 */
export const batchSchema = z
  .strictObject({
    count: countValue.optional(),
    percent: percentValue.optional(),
    selector: selectorSchema.optional(),
    /** For selector batches: at most this many (or this percentage) of the nodes it matches. */
    limit: sizeSchema.optional(),
    successThreshold: policyFields.successThreshold.optional(),
    timeoutSeconds: policyFields.timeoutSeconds.optional(),
    offline: policyFields.offline.optional(),
    waitSeconds: policyFields.waitSeconds.optional(),
    afterWait: policyFields.afterWait.optional(),
    pauseAfter: policyFields.pauseAfter.optional(),
    gates: policyFields.gates.optional(),
  })
  .superRefine((batch, ctx) => {
    const kinds = (["count", "percent", "selector"] as const).filter((k) => batch[k] !== undefined);
    if (kinds.length === 0) {
      ctx.addIssue({ code: "custom", message: "a batch needs one of count, percent or selector" });
    }
    for (const extra of kinds.slice(1)) {
      ctx.addIssue({
        code: "custom",
        path: [extra],
        message: `a batch has one of count, percent or selector; this one already has ${kinds[0]}`,
      });
    }
    if (batch.limit !== undefined && batch.selector === undefined) {
      ctx.addIssue({ code: "custom", path: ["limit"], message: "limit applies to selector batches only" });
    }
  });
export type BatchSpec = z.output<typeof batchSchema>;

const clockTime = /^(?:[01]\d|2[0-3]):[0-5]\d$/;

/**
 * A weekly maintenance window in the site's time zone: it opens at `start` on each of `days` and
 * closes at `end`, on the next day when `end` is not after `start` (`22:00`–`04:00` crosses
 * midnight). `end` may be `24:00`. Wall-clock times: across a daylight-saving change the window
 * still opens and closes at those local times.
 */
export const maintenanceWindowSchema = z
  .strictObject({
    days: z.array(z.enum(WEEKDAYS)).min(1, "name at least one day").max(7),
    start: z.string().regex(clockTime, 'must be a time "HH:MM" from 00:00 to 23:59'),
    end: z
      .string()
      .refine((v) => v === "24:00" || clockTime.test(v), 'must be a time "HH:MM" from 00:00 to 24:00'),
  })
  .superRefine((window, ctx) => {
    window.days.forEach((day, i) => {
      if (window.days.indexOf(day) !== i) {
        ctx.addIssue({ code: "custom", path: ["days", i], message: `${day} is listed twice` });
      }
    });
    if (window.start === window.end) {
      ctx.addIssue({ code: "custom", path: ["end"], message: "the window is empty: end equals start" });
    }
  });
export type MaintenanceWindow = z.output<typeof maintenanceWindowSchema>;

export const maintenanceWindowListSchema = z
  .array(maintenanceWindowSchema)
  .min(1, "list at least one window (without windows a site is always open)")
  .max(MAX_WINDOWS);

const siteIdKey = z.string().min(1, "site id must not be empty").max(64);

/**
 * Maintenance windows: `sites[siteId]` for a site, else `default`, else none (always open). A
 * site outside every one of its windows gets no new dispatches until one opens.
 */
export const maintenanceWindowsSchema = z.strictObject({
  default: maintenanceWindowListSchema.optional(),
  sites: z.record(siteIdKey, maintenanceWindowListSchema).optional(),
});
export type MaintenanceWindows = z.output<typeof maintenanceWindowsSchema>;

/**
 * Disruption budget: at most this many of a site's nodes updating at once (dispatched and not yet
 * running, failed or timed out). A percentage is of the site's nodes in the rollout's target and
 * rounds down, but never below 1. `sites` overrides it per site id. Nodes without a site form one
 * group of their own.
 */
export const disruptionBudgetSchema = z.strictObject({
  maxUpdatingPerSite: sizeSchema,
  sites: z.record(siteIdKey, sizeSchema).optional(),
});
export type DisruptionBudget = z.output<typeof disruptionBudgetSchema>;

/** Highest per-site uplink budget one can state (10 GB/s: anything above is no budget at all). */
export const MAX_SITE_BYTES_PER_SECOND = 10_000_000_000;

const siteUplinkBudgetSchema = z.strictObject({
  bytesPerSecond: z
    .int()
    .min(1, "must be at least 1 byte per second")
    .max(MAX_SITE_BYTES_PER_SECOND, `must be at most ${MAX_SITE_BYTES_PER_SECOND}`)
    .optional(),
  concurrentDownloads: z.int().min(1, "must be at least 1").max(MAX_COUNT).optional(),
});

/**
 * Bandwidth budget of each site's uplink (issue 11, #4): artifact bytes per second over the
 * site's leaf link, and/or how many of its nodes download at once. `sites` overrides it per site
 * id. Bytes per second pace the gateway's transfers to the site (its cache seed, else the chunks
 * its nodes pull from the hub); concurrent downloads cap the site's nodes updating at once
 * (together with the disruption budget: the smaller wins). Use is measured on the hub's /leafz.
 */
export const siteBandwidthSchema = siteUplinkBudgetSchema.extend({
  sites: z.record(siteIdKey, siteUplinkBudgetSchema).optional(),
});
export type SiteBandwidth = z.output<typeof siteBandwidthSchema>;
export type SiteUplinkBudget = z.output<typeof siteUplinkBudgetSchema>;

/** The budget that applies to one site (its own fields over the rollout-wide ones). */
export function siteUplinkBudget(
  strategy: { siteBandwidth?: SiteBandwidth | undefined },
  siteId: string | null,
): SiteUplinkBudget {
  const all = strategy.siteBandwidth;
  const own = siteId === null ? undefined : all?.sites?.[siteId];
  const bytesPerSecond = own?.bytesPerSecond ?? all?.bytesPerSecond;
  const concurrentDownloads = own?.concurrentDownloads ?? all?.concurrentDownloads;
  return {
    ...(bytesPerSecond !== undefined ? { bytesPerSecond } : {}),
    ...(concurrentDownloads !== undefined ? { concurrentDownloads } : {}),
  };
}

const labelKey = z
  .string()
  .min(1, "must not be empty")
  .max(63)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._/-]*$/, "a label key: letters, digits, . _ / -");

/** Options of automatic canary selection (the first batch). */
export const canarySchema = z.strictObject({
  /**
   * `stratified` (default): a sample across sites and hardware, preferring nodes that can start
   * now; `ordered`: the head of the site-stratified order, like every later batch.
   */
  mode: z.enum(["stratified", "ordered"]).default("stratified"),
  /** Another seed picks other nodes (same strata); default: the version's id. */
  seed: z.string().min(1, "must not be empty").max(64).optional(),
  /** Labels whose values say what hardware a node is; default hw, hardware, arch, model. */
  hardwareLabels: z.array(labelKey).min(1, "name at least one label").max(8).optional(),
});
export type CanaryOptions = z.output<typeof canarySchema>;

export const rolloutStrategySchema = z
  .strictObject({
    /** The batch sequence; the nodes no batch takes form an implicit last batch (with `defaults`). */
    batches: z.array(batchSchema).min(1, "give at least one batch").max(MAX_BATCHES),
    /** Policy for every batch that does not set its own, and for the implicit last batch. */
    defaults: batchPolicyDefaultsSchema.prefault({}),
    disruptionBudget: disruptionBudgetSchema.optional(),
    maintenanceWindows: maintenanceWindowsSchema.optional(),
    siteBandwidth: siteBandwidthSchema.optional(),
    /** When a batch misses its success threshold: halt (status `failed`, a person decides) or roll back. */
    onBatchFailure: z.enum(["pause", "rollback"]).default("pause"),
    /**
     * What a batch's metric gates' outcome does: `fail` rolls back (default) or pauses,
     * `inconclusive` pauses (default), continues or rolls back. Optional so that rollouts stored
     * before gates existed parse unchanged; `gateActionsOf` fills in the defaults.
     */
    gateActions: gateActionsSchema.optional(),
    /**
     * How the first batch's nodes are chosen (canary.ts): stratified across sites and hardware,
     * ordered by a hash of `seed` (default: the version's id, so a preview and the start agree).
     */
    canary: canarySchema.optional(),
  })
  .superRefine((strategy, ctx) => {
    // A gate's window must fit in its batch's timeout (the batch is watched that long at most).
    const checkWindows = (
      gates: readonly Gate[],
      timeoutSeconds: number,
      pathOf: (gate: number) => (string | number)[],
    ) => {
      gates.forEach((gate, j) => {
        if (gate.windowSeconds > timeoutSeconds)
          ctx.addIssue({
            code: "custom",
            path: pathOf(j),
            message: `the gate ${gate.name}'s window (${gate.windowSeconds} s) is longer than the batch timeout (${timeoutSeconds} s)`,
          });
      });
    };
    checkWindows(strategy.defaults.gates, strategy.defaults.timeoutSeconds, (j) => [
      "defaults",
      "gates",
      j,
      "windowSeconds",
    ]);
    strategy.batches.forEach((batch, i) => {
      const timeout = batch.timeoutSeconds ?? strategy.defaults.timeoutSeconds;
      if (batch.gates) checkWindows(batch.gates, timeout, (j) => ["batches", i, "gates", j, "windowSeconds"]);
      else if (batch.timeoutSeconds !== undefined)
        checkWindows(strategy.defaults.gates, timeout, () => ["batches", i, "timeoutSeconds"]);
    });
    let percentSum = 0;
    let fullAt: number | null = null;
    strategy.batches.forEach((batch, i) => {
      if (fullAt !== null) {
        ctx.addIssue({
          code: "custom",
          path: ["batches", i],
          message: `this batch never gets a node: batches up to ${fullAt} already take 100% of the target`,
        });
        return;
      }
      if (batch.percent === undefined) return;
      percentSum += batch.percent;
      if (percentSum > 100 + 1e-9) {
        ctx.addIssue({
          code: "custom",
          path: ["batches", i, "percent"],
          message: `the batches' percentages add up to ${round2(percentSum)}%, more than 100%`,
        });
      } else if (percentSum >= 100 - 1e-9) {
        fullAt = i;
      }
    });
  });

/** What a client sends (defaults optional). */
export type RolloutStrategyInput = z.input<typeof rolloutStrategySchema>;
/** A parsed strategy, defaults filled in: what a rollout stores and the planner takes. */
export type RolloutStrategy = z.output<typeof rolloutStrategySchema>;

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** Policy of a batch of the sequence (`index` < batches.length) or of the implicit last batch. */
export function resolveBatchPolicy(strategy: RolloutStrategy, index: number): BatchPolicy {
  const spec = strategy.batches[index];
  const d = strategy.defaults;
  return {
    successThreshold: spec?.successThreshold ?? d.successThreshold,
    timeoutSeconds: spec?.timeoutSeconds ?? d.timeoutSeconds,
    offline: spec?.offline ?? d.offline,
    waitSeconds: spec?.waitSeconds ?? d.waitSeconds,
    afterWait: spec?.afterWait ?? d.afterWait,
    pauseAfter: spec?.pauseAfter ?? d.pauseAfter,
    gates: spec?.gates ?? d.gates,
  };
}

/**
 * The site ids a strategy names, with the path of each mention, so that the API can refuse an id
 * that is not one of the organization's sites with an error naming the field.
 */
export function strategySiteIds(strategy: RolloutStrategy): { siteId: string; path: (string | number)[] }[] {
  const mentions: { siteId: string; path: (string | number)[] }[] = [];
  for (const siteId of Object.keys(strategy.maintenanceWindows?.sites ?? {})) {
    mentions.push({ siteId, path: ["maintenanceWindows", "sites", siteId] });
  }
  for (const siteId of Object.keys(strategy.disruptionBudget?.sites ?? {})) {
    mentions.push({ siteId, path: ["disruptionBudget", "sites", siteId] });
  }
  for (const siteId of Object.keys(strategy.siteBandwidth?.sites ?? {})) {
    mentions.push({ siteId, path: ["siteBandwidth", "sites", siteId] });
  }
  return mentions;
}
