import type { Db } from "@edgefleet/db";
import { type RolloutStrategyInput, rolloutStrategySchema } from "@edgefleet/rollout";
import { actOnRollout, insertRollout } from "@edgefleet/rollout-store";

/**
 * The demo's rollouts, made the way a person makes them (the rollout store's insert and start,
 * which the API calls too) and then driven by the gateway's real controller over the live hollow
 * fleet: one that runs to the end, one that stops for an approval after its first batch. They are
 * started before the agents are up (so `up` need not wait for them): `offline: "wait"` has each
 * batch wait for its nodes to come online, and the controller wakes as each one does.
 */
export interface DemoRollout {
  organization: string;
  app: string;
  version: string;
  /** Label selector of the target ("" = every node of the organization). */
  selector: string;
  strategy: RolloutStrategyInput;
  /** The status it reaches on its own: where `up` stops waiting. */
  settlesAs: "completed" | "awaiting_approval";
}

/** Every node is still offline when the rollouts start: batches wait for them (5 min at most). */
const OFFLINE_AT_START = {
  successThreshold: 100,
  timeoutSeconds: 600,
  offline: "wait",
  waitSeconds: 300,
  afterWait: "skip",
} as const;

export const DEMO_ROLLOUTS: DemoRollout[] = [
  {
    // The canaries already run 1.5.0 (the seed put them there): the fleet follows, site by site.
    organization: "acme",
    app: "telemetry-collector",
    version: "1.5.0",
    selector: "",
    strategy: {
      batches: [{ selector: "tier=canary" }, { selector: "site=plant-7" }, { percent: 50 }],
      defaults: OFFLINE_AT_START,
      disruptionBudget: { maxUpdatingPerSite: { percent: 50 } },
    },
    settlesAs: "completed",
  },
  {
    // Rotterdam first; Hamburg waits for a person to approve (the console's Approve button).
    organization: "globex",
    app: "route-optimizer",
    version: "1.0.0",
    selector: "",
    strategy: {
      batches: [{ selector: "site=hub-rotterdam", pauseAfter: "approval" }],
      defaults: OFFLINE_AT_START,
    },
    settlesAs: "awaiting_approval",
  },
];

const DEMO_ACTOR = { type: "system" as const, id: "demo" };

export interface StartedDemoRollout {
  rollout: DemoRollout;
  id: string;
  /** False when the app already had a rollout (an earlier `up`): nothing was made. */
  created: boolean;
}

/**
 * Creates and starts each demo rollout whose app has no rollout yet. Idempotent across `up`s: the
 * finished one stays finished, the paused one stays paused (or whatever a person did with it).
 */
export async function startDemoRollouts(db: Db, now = Date.now()): Promise<StartedDemoRollout[]> {
  const started: StartedDemoRollout[] = [];
  for (const rollout of DEMO_ROLLOUTS) {
    const version = await db.appVersion.findFirst({
      where: {
        organization: { slug: rollout.organization },
        app: { name: rollout.app },
        version: rollout.version,
      },
      include: { app: true },
    });
    if (!version) throw new Error(`no version ${rollout.app}@${rollout.version} in ${rollout.organization}`);
    const existing = await db.rollout.findFirst({
      where: { appId: version.appId },
      orderBy: { createdAt: "desc" },
      select: { id: true },
    });
    if (existing) {
      started.push({ rollout, id: existing.id, created: false });
      continue;
    }
    if (version.artifactState !== "ready") {
      throw new Error(`${rollout.app}@${rollout.version}: artifact is ${version.artifactState}, not ready`);
    }
    const strategy = rolloutStrategySchema.parse(rollout.strategy);
    const id = await db.$transaction(async (tx) => {
      const rolloutId = await insertRollout(tx, {
        organizationId: version.organizationId,
        appId: version.appId,
        appVersionId: version.id,
        selector: rollout.selector,
        siteIds: [],
        strategy,
        versionLabel: version.version,
        actor: DEMO_ACTOR,
      });
      const outcome = await actOnRollout(
        tx,
        version.organizationId,
        rolloutId,
        { type: "start" },
        DEMO_ACTOR,
        now,
      );
      if (!outcome.ok) throw new Error(`starting the ${rollout.app} rollout: ${JSON.stringify(outcome)}`);
      return rolloutId;
    });
    started.push({ rollout, id, created: true });
  }
  return started;
}
