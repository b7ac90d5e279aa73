/**
 * The nodes a rollout works on, as its caller reads them from the inventory, and the two keys the
 * core groups them by: the site (budgets, windows) and the order in which they are taken.
 */
import type { EpochMs } from "./time";
import { isValidTimeZone } from "./time-zones";

/** A node the rollout targets, as the planner sees it. */
export interface TargetNode {
  id: string;
  name: string;
  /** null: the node belongs to no site (such nodes form one group for budgets and windows). */
  siteId: string | null;
  /** IANA zone of the node's site; null means UTC (no site, or a site without a zone). */
  siteTimeZone: string | null;
  labels: Record<string, string>;
  online: boolean;
  /** The version of the rollout's app the node runs now (as observed), null when it runs none. */
  currentVersionId: string | null;
}

/** App instance states as agents report them (`AppInstanceState` in packages/db). */
export const INSTANCE_STATES = ["pending", "pulling", "starting", "running", "failed", "stopped"] as const;
export type InstanceState = (typeof INSTANCE_STATES)[number];

/** A node as the decider sees it: the planner's view plus what its agent last reported. */
export interface ObservedNode extends TargetNode {
  /**
   * Whether the node matches the rollout's target now. Nodes that left the target but were
   * already dispatched are still passed in (with false): they count in their batch and are
   * rolled back with the others.
   */
  inTarget: boolean;
  /** The rollout's app on this node as last reported; null when the node has no instance of it. */
  instance: { state: InstanceState; since: EpochMs; reason: string | null } | null;
}

/** Group key of a site; the site-less nodes share the key "" (site ids are never empty). */
export function siteKey(siteId: string | null): string {
  return siteId ?? "";
}

export function timeZoneOf(node: Pick<TargetNode, "siteTimeZone">): string {
  return node.siteTimeZone ?? "UTC";
}

/** Bad input to the planner or decider (a caller's bug or an unchecked value): `path` names the field. */
export class RolloutInputError extends Error {
  override name = "RolloutInputError";
  constructor(
    readonly path: (string | number)[],
    readonly reason: string,
  ) {
    super(`${path.join(".")}: ${reason}`);
  }
}

/**
 * Checks what the schemas upstream cannot: unique ids, valid and per-site consistent zones. Returns
 * the nodes by id (in their order), which the check builds anyway: the decider needs them so, and
 * building that map a second time was a pass over the fleet on every step.
 */
export function checkNodes<T extends TargetNode>(nodes: readonly T[]): Map<string, T> {
  const seen = new Map<string, T>();
  const zones = new Map<string, string | null>();
  const validZones = new Set<string>();
  nodes.forEach((node, i) => {
    if (seen.has(node.id)) throw new RolloutInputError(["nodes", i, "id"], `node ${node.id} is listed twice`);
    seen.set(node.id, node);
    if (node.siteTimeZone !== null && !validZones.has(node.siteTimeZone)) {
      if (isValidTimeZone(node.siteTimeZone)) validZones.add(node.siteTimeZone);
      else {
        throw new RolloutInputError(
          ["nodes", i, "siteTimeZone"],
          `unknown time zone ${JSON.stringify(node.siteTimeZone)}: use an IANA name such as "Europe/Berlin"`,
        );
      }
    }
    const key = siteKey(node.siteId);
    const known = zones.get(key);
    if (known === undefined) zones.set(key, node.siteTimeZone);
    else if (known !== node.siteTimeZone) {
      throw new RolloutInputError(
        ["nodes", i, "siteTimeZone"],
        `nodes of site ${node.siteId ?? "(none)"} disagree on its time zone (${known} and ${node.siteTimeZone})`,
      );
    }
  });
  return seen;
}

/**
 * The order in which nodes are taken into batches: stratified by site. Within a site nodes go by
 * id; across sites each node sits at its relative position in its site, (k + 0.5) / siteSize, so
 * that every prefix of the order holds about the same share of every site. A 10% batch therefore
 * takes about 10% of each site rather than all of the first site. Deterministic: ties go by site id.
 */
export function stratifiedOrder<T extends Pick<TargetNode, "id" | "siteId">>(nodes: readonly T[]): T[] {
  const bySite = new Map<string, T[]>();
  for (const node of nodes) {
    const key = siteKey(node.siteId);
    const list = bySite.get(key);
    if (list) list.push(node);
    else bySite.set(key, [node]);
  }
  const keyed: { node: T; position: number; site: string }[] = [];
  for (const [site, list] of bySite) {
    list.sort((a, b) => compareIds(a.id, b.id));
    list.forEach((node, k) => {
      keyed.push({ node, position: (k + 0.5) / list.length, site });
    });
  }
  keyed.sort(
    (a, b) => a.position - b.position || compareIds(a.site, b.site) || compareIds(a.node.id, b.node.id),
  );
  return keyed.map((k) => k.node);
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
