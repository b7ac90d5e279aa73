import { encodeMessage, formatWireId, PROTOCOL_VERSION, siteToken } from "@edgefleet/agent-sdk/protocol";
import { type Db, Prisma } from "@edgefleet/db";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "../../logger.js";
import type { EdgeMetrics } from "../edge-metrics.js";
import type { CredentialIssuer } from "./credential-issuer.js";
import type { Downlinks } from "./downlinks.js";

/** A moved node that does not switch is sent its credentials again after 1 min, doubling to 1 h. */
const FIRST_RETRY_MS = 60_000;
const MAX_RETRY_MS = 3_600_000;

interface StaleRow {
  id: string;
  org: bigint;
  wid: bigint;
  subject_site: string;
  site_wire_id: bigint | null;
}

/**
 * Sends a moved node credentials for its new site on the downlink it still listens on (the old
 * site's), as a CredentialsUpdate (docs/protocol.md "Credentials"): at once when the move is heard,
 * and again (1 min doubling to 1 h) while the node is online and has not said Hello on its new
 * site. A node offline at the time gets them at its next Hello instead. Nodes of subject layout 1
 * are not pushed to: they get credentials at their Hello, and an agent too old to use them would
 * refuse the push as an invalid delta. Run by the replica that publishes desired state.
 */
export class CredentialsPusher {
  private readonly sent = new Map<string, { at: number; attempts: number }>();

  constructor(
    private readonly db: Db,
    private readonly issuer: CredentialIssuer,
    private readonly downlinks: Downlinks,
    private readonly metrics: EdgeMetrics,
    private readonly logger: Logger,
  ) {}

  /** Online nodes whose credentials name another site than theirs: pushed to when due. */
  async rescan(platform: NatsConnection): Promise<void> {
    // Only nodes that moved within the last day carry former sites; their site is compared here.
    const now = Date.now();
    for (const row of await this.stale(Prisma.sql`n.former_sites <> '{}'::jsonb`)) {
      const sent = this.sent.get(row.id);
      const wait = sent ? Math.min(FIRST_RETRY_MS * 2 ** (sent.attempts - 1), MAX_RETRY_MS) : 0;
      if (!sent || now - sent.at >= wait) await this.push(platform, row, (sent?.attempts ?? 0) + 1);
    }
    if (this.sent.size > 100_000) this.sent.clear();
  }

  /** Nodes that just moved: pushed to at once (those online, with credentials of layout 2). */
  async pushMoved(platform: NatsConnection, nodeIds: string[]): Promise<void> {
    for (const row of await this.stale(Prisma.sql`n.id = ANY(${nodeIds}::uuid[])`))
      await this.push(platform, row, 1);
  }

  /** Online nodes of layout 2 (among `condition`'s) whose credentials name another site. */
  private async stale(condition: Prisma.Sql): Promise<StaleRow[]> {
    const rows = await this.db.$queryRaw<StaleRow[]>(Prisma.sql`
      SELECT n.id::text, o.wire_id AS org, n.wire_id AS wid, n.subject_site, s.wire_id AS site_wire_id
      FROM node n JOIN organization o ON o.id = n.organization_id LEFT JOIN site s ON s.id = n.site_id
      WHERE n.status = 'online' AND n.subject_site IS NOT NULL AND ${condition}`);
    return rows.filter(
      (row) => row.subject_site !== siteToken(row.site_wire_id === null ? null : BigInt(row.site_wire_id)),
    );
  }

  private async push(platform: NatsConnection, row: StaleRow, attempts: number): Promise<void> {
    this.sent.set(row.id, { at: Date.now(), attempts });
    try {
      const issued = await this.issuer.issue(row.id, "reissue");
      if (!issued) return;
      const subject = this.downlinks.subject({
        org: formatWireId(BigInt(row.org)),
        wid: formatWireId(BigInt(row.wid)),
        subjectSite: row.subject_site,
      });
      platform.publish(subject, encodeMessage("credentialsUpdate", { v: PROTOCOL_VERSION, jwt: issued.jwt }));
      this.metrics.credentialsIssued.inc({ via: "push" });
      this.logger.info(
        { nodeId: row.id, from: row.subject_site, to: issued.site, attempts },
        "sent a moved node credentials for its new site",
      );
    } catch (error) {
      this.logger.error({ err: error, nodeId: row.id }, "cannot send a moved node its new credentials");
    }
  }
}
