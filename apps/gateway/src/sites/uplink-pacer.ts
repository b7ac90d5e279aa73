import { type Db, Prisma } from "@edgefleet/db";
import { type RolloutStrategy, siteUplinkBudget } from "@edgefleet/rollout";
import type { EdgeNode } from "../edge/node-directory.js";

interface Queued {
  bytes: number;
  rate: number;
  send: () => void;
  resolve: () => void;
}

interface NodeBudget {
  siteId: string | null;
  bytesPerSecond: number | null;
  expiresAt: number;
}

/**
 * Paces artifact chunks the gateway sends to a site's nodes (the hub fallback: a site without a
 * cache) to the bytes-per-second budget of the rollout updating them (issue 11, #4): a queue per
 * site, so any interval carries at most budget × its length plus one chunk. Per gateway replica: with R replicas
 * answering one site, its link may carry up to R × the budget (the queue group spreads chunks).
 */
export class SiteUplinkPacer {
  private readonly budgets = new Map<string, NodeBudget>();
  private readonly queues = new Map<string, Queued[]>();

  constructor(
    private readonly db: Db,
    private readonly ttlMs = 5_000,
    /**
     * "No budget" is remembered for less time: a rollout that starts right after a node fetched
     * without one must hold that node's chunks to its budget within this bound, not 5 s later.
     */
    private readonly noBudgetTtlMs = 1_000,
  ) {}

  /**
   * Queues `send` (one chunk of `bytes` to this node) behind the site's earlier chunks, or returns
   * null when no budget applies (send at once). One drainer per site sends a chunk, then waits
   * bytes / budget before the next, measured from the real send: a late timer (a busy event
   * loop) delays the queue, it never makes a burst.
   */
  async pace(node: EdgeNode, bytes: number, send: () => void): Promise<{ sent: Promise<void> } | null> {
    const budget = await this.budgetOf(node);
    if (budget.siteId === null || budget.bytesPerSecond === null) return null;
    let queue = this.queues.get(budget.siteId);
    if (!queue) {
      queue = [];
      this.queues.set(budget.siteId, queue);
    }
    const sent = new Promise<void>((resolve) => {
      queue.push({ bytes, rate: budget.bytesPerSecond as number, send, resolve });
    });
    if (queue.length === 1) void this.drain(budget.siteId, queue);
    return { sent };
  }

  private async drain(siteId: string, queue: Queued[]): Promise<void> {
    while (queue.length > 0) {
      const next = queue[0] as Queued;
      try {
        next.send();
      } finally {
        next.resolve();
      }
      await new Promise((resolve) => setTimeout(resolve, (next.bytes / next.rate) * 1000));
      queue.shift();
    }
    if (this.queues.get(siteId) === queue) this.queues.delete(siteId);
  }

  private async budgetOf(node: EdgeNode): Promise<NodeBudget> {
    const known = this.budgets.get(node.id);
    if (known && known.expiresAt > Date.now()) return known;
    // The budget of the newest rollout still moving that has this node in it.
    const [row] = await this.db.$queryRaw<Array<{ siteId: string | null; strategy: RolloutStrategy | null }>>(
      Prisma.sql`
        SELECT n.site_id::text AS "siteId", r.strategy
        FROM node n
        LEFT JOIN LATERAL (
          SELECT r.strategy FROM rollout_node rn
          JOIN rollout r ON r.id = rn.rollout_id AND r.organization_id = rn.organization_id
          WHERE rn.node_id = n.id AND r.organization_id = n.organization_id
            AND r.status IN ('running', 'paused', 'awaiting_approval', 'rolling_back')
          ORDER BY r.created_at DESC LIMIT 1) r ON true
        WHERE n.id = ${node.id}::uuid AND n.organization_id = ${node.organizationId}::uuid`,
    );
    const siteId = row?.siteId ?? null;
    const budget: NodeBudget = {
      siteId,
      bytesPerSecond: row?.strategy ? (siteUplinkBudget(row.strategy, siteId).bytesPerSecond ?? null) : null,
      expiresAt: 0,
    };
    budget.expiresAt = Date.now() + (budget.bytesPerSecond === null ? this.noBudgetTtlMs : this.ttlMs);
    if (this.budgets.size > 100_000) this.budgets.clear();
    this.budgets.set(node.id, budget);
    return budget;
  }
}
