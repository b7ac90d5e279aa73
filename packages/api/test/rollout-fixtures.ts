/** Rollout test fixtures: an app with versions whose artifacts are ready, and labelled nodes. */
import type { Db } from "@edgefleet/db";
import { stepRollout } from "@edgefleet/rollout-store";

export async function readyApp(db: Db, organizationId: string, name: string, versions: string[]) {
  const app = await db.app.create({ data: { organizationId, name } });
  const ids: Record<string, string> = {};
  for (const version of versions) {
    ids[version] = (
      await db.appVersion.create({
        data: {
          organizationId,
          appId: app.id,
          version,
          artifactSource: "upload",
          artifactState: "ready",
          artifactSha256: "c".repeat(64),
          artifactSize: 1024n,
          runSpec: { command: [`./${name}`] },
        },
      })
    ).id;
  }
  return { appId: app.id, versions: ids };
}

export async function labelledNodes(
  db: Db,
  organizationId: string,
  prefix: string,
  count: number,
  labels: Record<string, string>,
  options: { siteId?: string | null; status?: "online" | "offline" | "pending" } = {},
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const node = await db.node.create({
      data: {
        organizationId,
        name: `${prefix}-${String(i).padStart(3, "0")}`,
        labels,
        siteId: options.siteId ?? null,
        status: options.status ?? "online",
      },
    });
    ids.push(node.id);
  }
  return ids;
}

/** Plays the agents: every node that desires `versionId` of the app now runs it. */
export async function agentsRun(db: Db, appId: string, versionId: string): Promise<number> {
  return db.$executeRaw`
    UPDATE app_instance SET observed_version_id = desired_version_id, state = 'running',
      target_version_id = NULL, state_changed_at = now()
    WHERE app_id = ${appId}::uuid AND desired_version_id = ${versionId}::uuid`;
}

/** Steps the rollout like the controller until it only waits. */
export async function settle(db: Db, rolloutId: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const outcome = await stepRollout(db, rolloutId);
    if (!("moved" in outcome) || !outcome.moved) return;
  }
  throw new Error("the rollout did not settle in 20 steps");
}
