/**
 * Where each node of a batch stands, derived from facts only (dispatch records, the agent's
 * reports, online or not, the clock). Nothing about a node's outcome is stored, so deciding again
 * after a crash reaches the same outcomes. The live rollout page counts nodes with the same code.
 */
import type { ObservedNode } from "./nodes";
import type { BatchTally, NodeDispatch, RollbackDispatch } from "./state";
import type { BatchPolicy } from "./strategy";
import { type EpochMs, SECOND_MS } from "./time";

export type NodeOutcome =
  /** Online, not dispatched yet: goes as soon as its site's window and budget allow. */
  | "ready"
  /** Offline, not dispatched, offline policy `wait` and the wait is not over. */
  | "waiting_offline"
  /** Dispatched, not finished, timeout not reached. */
  | "updating"
  | "succeeded"
  | "failed"
  | "timed_out"
  | "failed_offline"
  | "skipped_offline"
  | "already_current"
  | "left";

const IN_PROGRESS: ReadonlySet<NodeOutcome> = new Set(["ready", "waiting_offline", "updating"]);

export function isInProgress(outcome: NodeOutcome): boolean {
  return IN_PROGRESS.has(outcome);
}

/** When a dispatched node's time is up. */
export function dispatchDeadline(
  dispatchedAt: EpochMs,
  policy: Pick<BatchPolicy, "timeoutSeconds">,
): EpochMs {
  return dispatchedAt + policy.timeoutSeconds * SECOND_MS;
}

/** When the batch stops waiting for its offline nodes (policy `wait`). */
export function offlineWaitDeadline(
  batchStartedAt: EpochMs,
  policy: Pick<BatchPolicy, "waitSeconds">,
): EpochMs {
  return batchStartedAt + policy.waitSeconds * SECOND_MS;
}

function offlineVerdict(policy: BatchPolicy): "failed_offline" | "skipped_offline" {
  const rule = policy.offline === "wait" ? policy.afterWait : policy.offline;
  return rule === "fail" ? "failed_offline" : "skipped_offline";
}

/** A node of a forward batch (or a catch-up node, with its batch's policy). */
export function forwardOutcome(args: {
  node: ObservedNode | undefined;
  dispatch: NodeDispatch | undefined;
  targetVersionId: string;
  policy: BatchPolicy;
  batchStartedAt: EpochMs;
  now: EpochMs;
}): NodeOutcome {
  const { node, dispatch, policy, now } = args;
  if (dispatch) {
    if (!node) return "left";
    if (node.currentVersionId === dispatch.toVersionId && node.instance?.state === "running")
      return "succeeded";
    if (node.instance?.state === "failed" && node.instance.since >= dispatch.dispatchedAt) return "failed";
    if (now < dispatchDeadline(dispatch.dispatchedAt, policy)) return "updating";
    return node.online ? "timed_out" : offlineVerdict(policy);
  }
  if (!node?.inTarget) return "left";
  if (node.currentVersionId === args.targetVersionId) return "already_current";
  if (node.online) return "ready";
  if (policy.offline === "wait" && now < offlineWaitDeadline(args.batchStartedAt, policy)) {
    return "waiting_offline";
  }
  return offlineVerdict(policy);
}

/** A node of a rollback batch: offline nodes are skipped (and rolled back when they return). */
export function rollbackOutcome(args: {
  node: ObservedNode | undefined;
  dispatch: RollbackDispatch | undefined;
  timeoutSeconds: number;
  now: EpochMs;
}): NodeOutcome {
  const { node, dispatch, now } = args;
  if (!node) return "left";
  if (!dispatch) return node.online ? "ready" : "skipped_offline";
  if (isBackOn(node, dispatch.toVersionId)) return "succeeded";
  if (node.instance?.state === "failed" && node.instance.since >= dispatch.dispatchedAt) return "failed";
  if (now < dispatch.dispatchedAt + args.timeoutSeconds * SECOND_MS) return "updating";
  return node.online ? "timed_out" : "skipped_offline";
}

/**
 * Whether a rolled-back node runs the version it had (or, for none, no longer runs the app). A node
 * that runs no version yet but is still switching (its forward update in flight) is not back on
 * "none": it is about to run the version it was rolled back from.
 */
export function isBackOn(node: ObservedNode, versionId: string | null): boolean {
  if (versionId === null) return node.currentVersionId === null && !isSwitching(node);
  return node.currentVersionId === versionId && node.instance?.state === "running";
}

/** The agent reports a version switch in progress (not yet running, failed or stopped). */
export function isSwitching(node: ObservedNode): boolean {
  const state = node.instance?.state;
  return state === "pending" || state === "pulling" || state === "starting";
}

/**
 * How long a dispatched node holds a slot of its site's disruption budget, or null when it holds
 * none now. An updating node holds it until its timeout. A node that timed out while still
 * switching has not stopped updating: it is a failure for the verdict, but it keeps its slot until
 * it reports, goes offline, or a second timeout runs out (then it is presumed stuck, and a stuck
 * node must not hold its site's rollout or rollback forever).
 */
export function budgetSlotUntil(
  outcome: NodeOutcome,
  node: ObservedNode,
  dispatchedAt: EpochMs,
  timeoutSeconds: number,
  now: EpochMs,
): EpochMs | null {
  const deadline = dispatchedAt + timeoutSeconds * SECOND_MS;
  if (outcome === "updating") return deadline;
  if (outcome !== "timed_out" || !node.online || !isSwitching(node)) return null;
  const stuckAt = deadline + timeoutSeconds * SECOND_MS;
  return now < stuckAt ? stuckAt : null;
}

export function emptyTally(): BatchTally {
  return {
    nodes: 0,
    succeeded: 0,
    failed: 0,
    timedOut: 0,
    failedOffline: 0,
    skippedOffline: 0,
    alreadyCurrent: 0,
    left: 0,
    inProgress: 0,
  };
}

export function tallyOutcomes(outcomes: Iterable<NodeOutcome>): BatchTally {
  const tally = emptyTally();
  for (const outcome of outcomes) {
    tally.nodes++;
    switch (outcome) {
      case "ready":
      case "waiting_offline":
      case "updating":
        tally.inProgress++;
        break;
      case "succeeded":
        tally.succeeded++;
        break;
      case "failed":
        tally.failed++;
        break;
      case "timed_out":
        tally.timedOut++;
        break;
      case "failed_offline":
        tally.failedOffline++;
        break;
      case "skipped_offline":
        tally.skippedOffline++;
        break;
      case "already_current":
        tally.alreadyCurrent++;
        break;
      case "left":
        tally.left++;
        break;
    }
  }
  return tally;
}

/** Failures that count against the success threshold. */
export function failures(tally: BatchTally): number {
  return tally.failed + tally.timedOut + tally.failedOffline;
}

/**
 * The verdict of a batch, or null while it must go on. A batch fails as soon as its threshold can
 * no longer be met even if every unfinished node succeeded; it succeeds when every node is done
 * and at least `successThreshold`% of the counted ones (succeeded + failures) succeeded. A batch
 * with no counted node (all current, skipped or gone) succeeds: there is nothing against it.
 */
export function batchVerdict(
  tally: BatchTally,
  successThreshold: number,
): { verdict: "succeeded" | "failed"; reason: string } | null {
  const failed = failures(tally);
  const best = tally.succeeded + tally.inProgress;
  const detail = () =>
    `${tally.succeeded} of ${tally.succeeded + failed} counted nodes running` +
    ` (${successThreshold}% required; ${tally.failed} failed, ${tally.timedOut} timed out,` +
    ` ${tally.failedOffline} offline counted as failed, ${tally.skippedOffline} offline skipped)`;
  if (failed > 0 && best * 100 < successThreshold * (best + failed)) {
    if (tally.inProgress > 0) {
      return { verdict: "failed", reason: `threshold can no longer be met: ${detail()}` };
    }
    return { verdict: "failed", reason: `missed the success threshold: ${detail()}` };
  }
  if (tally.inProgress > 0) return null;
  if (tally.succeeded + failed === 0) {
    return { verdict: "succeeded", reason: "no node counted (all already current, offline-skipped or gone)" };
  }
  return { verdict: "succeeded", reason: `met the success threshold: ${detail()}` };
}
