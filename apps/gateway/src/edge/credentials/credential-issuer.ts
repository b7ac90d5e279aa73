import { formatWireId, siteToken } from "@edgefleet/agent-sdk/protocol";
import { type Db, Prisma } from "@edgefleet/db";
import { nodeUserJwt, type TenancySecrets } from "@edgefleet/nats-tenancy";

/** The organization's NATS account (TenantAccounts.ensure: created and pushed on first use). */
export interface AccountDirectory {
  ensure(organizationId: string): Promise<{ accountPublicKey: string }>;
}

export interface IssuedCredentials {
  jwt: string;
  /** The site token the credentials name (the node's current site). */
  site: string;
}

interface NodeRow {
  id: string;
  organization_id: string;
  public_key: string | null;
  org: bigint;
  wid: bigint;
  site_wire_id: bigint | null;
}

/**
 * Node credentials for the node's current site (subject layout 2): what enrollment hands out, and
 * what a node gets again when its credentials name other subjects (it moved to another site, or it
 * enrolled before site scoping; docs/protocol.md "Credentials"). The JWT is for the node's own
 * public key: useless without its seed.
 */
export class CredentialIssuer {
  constructor(
    private readonly db: Db,
    private readonly secrets: TenancySecrets,
    private readonly accounts: AccountDirectory,
  ) {}

  /**
   * Null for a node that is unknown, revoked or has no key yet. At enrollment the agent uses them
   * from its first connection: their site is where it listens from now on.
   */
  async issue(nodeId: string, at: "enrollment" | "reissue"): Promise<IssuedCredentials | null> {
    const [node] = await this.db.$queryRaw<NodeRow[]>(Prisma.sql`
      SELECT n.id::text, n.organization_id::text, n.public_key, o.wire_id AS org, n.wire_id AS wid,
             s.wire_id AS site_wire_id
      FROM node n JOIN organization o ON o.id = n.organization_id
      LEFT JOIN site s ON s.id = n.site_id
      WHERE n.id = ${nodeId}::uuid AND n.status <> 'revoked' AND n.revoked_at IS NULL`);
    if (!node?.public_key) return null;
    const account = await this.accounts.ensure(node.organization_id);
    const site = siteToken(node.site_wire_id === null ? null : BigInt(node.site_wire_id));
    const jwt = await nodeUserJwt(this.secrets, {
      nodeId: node.id,
      org: formatWireId(BigInt(node.org)),
      wid: formatWireId(BigInt(node.wid)),
      site,
      publicKey: node.public_key,
      accountPublicKey: account.accountPublicKey,
    });
    if (at === "enrollment")
      await this.db.$executeRaw`UPDATE node SET subject_site = ${site} WHERE id = ${nodeId}::uuid`;
    return { jwt, site };
  }
}
