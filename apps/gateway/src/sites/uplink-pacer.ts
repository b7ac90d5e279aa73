import { type Db, Prisma } from "@edgefleet/db";
import { type RolloutStrategy, siteUplinkBudget } from "@edgefleet/rollout";
import type { EdgeNode } from "../edge/node-directory.js";

interface NodeBudget {
  siteId: string | null;
  bytesPerSecond: number | null;
  expiresAt: number;
}

/**
 * Paces artifact chunks the gateway sends to a site's nodes (the hub fallback: a site without a
 * cache) to the bytes-per-second budget of the rollout updating them (issue 11, #4). Each site
 * has a cursor: a chunk may go once the bytes up to its end fit the budget, so any interval
 * carries at most budget × its length plus one chunk. Per gateway replica: with R replicas
 * answering one site, its link may carry up to R × the budget (the queue group spreads chunks).
 */
export class SiteUplinkPacer {
  private readonly budgets = new Map<string, NodeBudget>();
  private readonly cursors = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly ttlMs = 5_000,
  ) {}

  /** How long to hold a chunk of `bytes` for this node before answering (0: at once). */
  async delayMs(node: EdgeNode, bytes: number): Promise<number> {
    const budget = await this.budgetOf(node);
    if (budget.siteId === null || budget.bytesPerSecond === null) return 0;
    const now = performance.now();
    const start = Math.max(now, this.cursors.get(budget.siteId) ?? now);
    const end = start + (bytes / budget.bytesPerSecond) * 1000;
    this.cursors.set(budget.siteId, end);
    return Math.max(0, end - now);
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
      expiresAt: Date.now() + this.ttlMs,
    };
    if (this.budgets.size > 100_000) this.budgets.clear();
    this.budgets.set(node.id, budget);
    return budget;
  }
}
