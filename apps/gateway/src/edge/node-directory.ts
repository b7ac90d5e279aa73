import { parseWireId, siteToken } from "@edgefleet/agent-sdk/protocol";
import { ACCOUNT_CHANGED_CHANNEL, type Db, NODE_MOVED_CHANNEL, Prisma } from "@edgefleet/db";
import { NotificationListener } from "../db-notifications.js";
import type { Logger } from "../logger.js";
import type { EdgeService } from "./service.js";

/** A node as the edge path needs it, found from the wire ids of a subject. */
export interface EdgeNode {
  id: string;
  organizationId: string;
  /** Organization and node wire ids (subject tokens). */
  org: string;
  wid: string;
  revoked: boolean;
  /** The token of the node's current site (`_<site wire id>`, `_` without a site). */
  site: string;
  /** Site token of the subjects the node listens on (its last Hello, or enrollment); null: layout 1. */
  subjectSite: string | null;
  /** Sites it was moved away from (the last day's), each with when (unix ms). */
  formerSites: Record<string, number>;
}

export interface NodeDirectoryOptions {
  /**
   * How long a found node is reused. Long: what changes a node's entry is announced (a move, a
   * revocation: forgetNode, forgetOrganization) and a revocation also cuts the node off at NATS at
   * once; the bound is a safety net. Each entry's expiry is spread over ±25 % so a fleet that came
   * online together is not re-read together.
   */
  ttlMs?: number;
  /** How long "no such node" is reused (a node enrolled meanwhile is found after this). */
  missTtlMs?: number;
  maxEntries?: number;
  /** Lookups arriving within this window share one query (reconnect storms). */
  batchWindowMs?: number;
}

interface Waiter {
  resolve: (node: EdgeNode | null) => void;
  reject: (error: unknown) => void;
}

/**
 * Resolves `(org wire id, node wire id)` from a subject to a node, with a small TTL cache and
 * batched queries. Both tokens must match one row: a node's wire id under another organization's
 * token resolves to nothing, so a subject can never be attributed across tenants.
 */
export class NodeDirectory {
  private readonly cache = new Map<string, { node: EdgeNode | null; expiresAt: number }>();
  private pending = new Map<string, Waiter[]>();
  private timer: NodeJS.Timeout | null = null;
  private readonly ttlMs: number;
  private readonly missTtlMs: number;
  private readonly maxEntries: number;
  private readonly batchWindowMs: number;

  constructor(
    private readonly db: Db,
    options: NodeDirectoryOptions = {},
  ) {
    // Measured at 4,000 idle nodes (issue 16): with 30 s every node was re-read twice a minute,
    // ~130 small queries a second, most of the gateway's and much of Postgres's idle CPU.
    this.ttlMs = options.ttlMs ?? 15 * 60_000;
    this.missTtlMs = options.missTtlMs ?? 30_000;
    this.maxEntries = options.maxEntries ?? 200_000;
    this.batchWindowMs = options.batchWindowMs ?? 5;
  }

  /** null: no such node in that organization (or tokens that are not wire ids). */
  resolve(org: string, wid: string): Promise<EdgeNode | null> {
    const key = `${org}.${wid}`;
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > Date.now()) return Promise.resolve(cached.node);
    if (parseWireId(org) === null || parseWireId(wid) === null) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const waiters = this.pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      this.timer ??= setTimeout(() => void this.flush(), this.batchWindowMs);
    });
  }

  /** Forgets a node (e.g. after a revocation) so the next message re-reads it. */
  forget(org: string, wid: string): void {
    this.cache.delete(`${org}.${wid}`);
  }

  /** Forgets a node by its id (a move: its site changed). A scan of the cache: moves are rare. */
  forgetNode(nodeId: string): void {
    for (const [key, entry] of this.cache) if (entry.node?.id === nodeId) this.cache.delete(key);
  }

  /** Forgets an organization's nodes (one of them was revoked). A scan: revocations are rare. */
  forgetOrganization(organizationId: string): void {
    for (const [key, entry] of this.cache)
      if (entry.node?.organizationId === organizationId) this.cache.delete(key);
  }

  /** Forgets everything (announcements may have been missed). */
  clear(): void {
    this.cache.clear();
  }

  private async flush(): Promise<void> {
    this.timer = null;
    const batch = this.pending;
    this.pending = new Map();
    const keys = [...batch.keys()];
    const orgIds = keys.map((key) => String(parseWireId(key.split(".")[0] ?? "")));
    const nodeIds = keys.map((key) => String(parseWireId(key.split(".")[1] ?? "")));
    let found = new Map<string, EdgeNode>();
    try {
      const rows = await this.db.$queryRaw<
        Array<{
          id: string;
          organization_id: string;
          org: string;
          wid: string;
          revoked: boolean;
          site_wire_id: string | null;
          subject_site: string | null;
          former_sites: Record<string, number> | null;
        }>
      >(Prisma.sql`
        SELECT n.id, n.organization_id, q.org::text AS org, q.wid::text AS wid,
               (n.status = 'revoked' OR n.revoked_at IS NOT NULL) AS revoked,
               s.wire_id::text AS site_wire_id, n.subject_site, n.former_sites
        FROM unnest(${orgIds}::bigint[], ${nodeIds}::bigint[]) AS q(org, wid)
        JOIN organization o ON o.wire_id = q.org
        JOIN node n ON n.wire_id = q.wid AND n.organization_id = o.id
        LEFT JOIN site s ON s.id = n.site_id`);
      found = new Map(
        rows.map((row) => {
          const node: EdgeNode = {
            id: row.id,
            organizationId: row.organization_id,
            org: BigInt(row.org).toString(36),
            wid: BigInt(row.wid).toString(36),
            revoked: row.revoked,
            site: siteToken(row.site_wire_id === null ? null : BigInt(row.site_wire_id)),
            subjectSite: row.subject_site,
            formerSites: formerSiteTokens(row.former_sites ?? {}),
          };
          return [`${node.org}.${node.wid}`, node];
        }),
      );
    } catch (error) {
      // Not cached: the next message asks again. Waiters get the error.
      for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
      return;
    }
    const now = Date.now();
    for (const [key, waiters] of batch) {
      const node = found.get(key) ?? null;
      this.remember(key, node, now + (node ? this.ttlMs * (0.75 + Math.random() / 2) : this.missTtlMs));
      for (const waiter of waiters) waiter.resolve(node);
    }
  }

  private remember(key: string, node: EdgeNode | null, expiresAt: number): void {
    if (this.cache.size >= this.maxEntries) {
      // Oldest insertion first (Map order): a cheap approximation of LRU.
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.delete(key);
    this.cache.set(key, { node, expiresAt });
  }
}

/** `node.former_sites` (`{"<site wire id>" | "none": ms}`) keyed by site token. */
function formerSiteTokens(stored: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(stored).map(([site, at]) => [
      siteToken(site === "none" ? null : BigInt(site)),
      Number(at),
    ]),
  );
}

/**
 * What keeps a directory's long-lived entries true, on every replica: a node that moved to another
 * site is forgotten, an organization's nodes when one of them was revoked, and everything when a
 * listener (re)connects, since announcements sent while it was away are lost.
 */
export function nodeDirectoryFeeds(
  directory: NodeDirectory,
  databaseUrl: string,
  logger: Logger,
): EdgeService[] {
  const follow = (name: string, channel: string, forget: (payload: string) => void): EdgeService => {
    const listener = new NotificationListener(
      databaseUrl,
      channel,
      async (payload) => forget(payload),
      logger.child({ component: name }),
      () => directory.clear(),
    );
    return { name, start: () => listener.start(), stop: () => listener.stop() };
  };
  return [
    follow("node-moves", NODE_MOVED_CHANNEL, (nodeId) => directory.forgetNode(nodeId)),
    follow("node-revocations", ACCOUNT_CHANGED_CHANNEL, (organizationId) =>
      directory.forgetOrganization(organizationId),
    ),
  ];
}
