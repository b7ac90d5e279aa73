import { formatWireId } from "@edgefleet/agent-sdk/protocol";
import { type Db, revokedSiteCredentialKeys } from "@edgefleet/db";
import { pushAccountJwt, type TenancySecrets, tenantAccountJwt } from "@edgefleet/nats-tenancy";
import { createAccount } from "@nats-io/nkeys";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";

/** Every hub server answers with its leaf connections (the system account's monitoring request). */
const LEAFZ_REQUEST = "$SYS.REQ.SERVER.PING.LEAFZ";

interface LeafzReply {
  server?: { id?: string };
  data?: { server_id?: string; leafs?: Array<{ id?: number; name?: string; account?: string }> };
}

export interface TenantAccount {
  organizationId: string;
  slug: string;
  accountPublicKey: string;
  organizationWireId: string;
}

/**
 * One NATS account per organization. The account's identity key is made once and stored
 * (only its public half: the operator's signing key signs the account JWT, and the shared
 * tenant signing key signs its users, so the account's own seed is never needed). The JWT
 * itself is derived from the database (wire id, revoked nodes) and pushed to the hub's
 * resolver whenever it changes.
 */
export class TenantAccounts {
  /** Organizations whose current JWT this process has pushed. */
  private readonly pushed = new Set<string>();
  /**
   * The JWT last pushed per organization, re-sent as is to site leaves: the hub sees the same
   * claims (no work), a leaf restarted from its bundle's older copy catches up.
   */
  private readonly lastPushed = new Map<string, string>();
  /**
   * Pushes of one organization run one after another: a leaf (memory resolver) applies whatever
   * JWT arrives last, so a re-send of an older JWT must never overtake a newer revocation.
   */
  private readonly pushQueue = new Map<string, Promise<void>>();
  /** First pushes in flight: an enrollment burst for a new organization shares one push. */
  private readonly firstPushes = new Map<string, Promise<void>>();
  /** The hub's leaf connections seen at the last check (`<server id>/<connection id>`). */
  private knownLeafLinks = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly secrets: TenancySecrets,
    private readonly systemConnection: () => Promise<NatsConnection>,
    private readonly logger: Logger,
  ) {}

  /** The organization's account, created and pushed if this process has not done so yet. */
  async ensure(organizationId: string): Promise<TenantAccount> {
    const account = await this.load(organizationId);
    if (!this.pushed.has(organizationId)) {
      let push = this.firstPushes.get(organizationId);
      if (!push) {
        push = this.publish(organizationId).finally(() => this.firstPushes.delete(organizationId));
        this.firstPushes.set(organizationId, push);
      }
      await push;
    }
    return account;
  }

  /** Re-issues and pushes the account JWT (after a revocation, say). */
  async publish(organizationId: string): Promise<void> {
    await this.inOrder(organizationId, async () => {
      const { jwt, revoked } = await this.currentJwt(organizationId);
      await pushAccountJwt(await this.systemConnection(), jwt);
      this.pushed.add(organizationId);
      this.lastPushed.set(organizationId, jwt);
      this.logger.info({ organizationId, revoked }, "pushed tenant account JWT");
    });
  }

  private inOrder(organizationId: string, push: () => Promise<void>): Promise<void> {
    const previous = this.pushQueue.get(organizationId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(push);
    this.pushQueue.set(organizationId, next);
    return next.finally(() => {
      if (this.pushQueue.get(organizationId) === next) this.pushQueue.delete(organizationId);
    });
  }

  /**
   * Pushes the account JWT of every organization with a leaf connection the hub did not have at
   * the last check (its system account's LEAFZ, every hub server): a leaf that (re)linked starts
   * from its bundle's copy, so it gets the current one within one check, revocations since
   * included. Unchanged leaves get nothing: each claims update makes a leaf re-verify every
   * connected user of the account (2,000 ed25519 verifications on a site of 2,000 nodes), which
   * a blind re-send every 15 s made half of an idle leaf's CPU. Returns the organizations pushed.
   */
  async pushToNewLeafLinks(): Promise<number> {
    const connection = await this.systemConnection();
    const links = new Map<string, string>(); // link → account
    const replies = await connection.requestMany(LEAFZ_REQUEST, "{}", {
      maxWait: 2_000,
      strategy: "timer",
    });
    for await (const reply of replies) {
      const answer = reply.json<LeafzReply>();
      const server = answer.server?.id ?? answer.data?.server_id ?? "";
      for (const leaf of answer.data?.leafs ?? [])
        if (leaf.account && leaf.id !== undefined) links.set(`${server}/${leaf.id}`, leaf.account);
    }
    const accounts = new Set<string>();
    for (const [link, account] of links) if (!this.knownLeafLinks.has(link)) accounts.add(account);
    this.knownLeafLinks = new Set(links.keys());
    if (accounts.size === 0) return 0;
    const organizations = await this.db.organization.findMany({
      where: { natsAccountKey: { in: [...accounts] } },
      select: { id: true },
    });
    for (const { id } of organizations) await this.publish(id);
    return organizations.length;
  }

  /**
   * Re-sends the account JWT of every organization with live site credentials (issue 8 #13): the
   * safety net under pushToNewLeafLinks (a link check that failed, a gateway restarted while a
   * leaf linked), so a leaf admits nodes revoked since its bundle for at most the resend period.
   */
  async resendToLeaves(): Promise<number> {
    const organizations = await this.db.siteLeafCredential.findMany({
      where: { revokedAt: null, expiresAt: { gt: new Date() } },
      distinct: ["organizationId"],
      select: { organizationId: true },
    });
    for (const { organizationId } of organizations) {
      if (!this.lastPushed.has(organizationId)) {
        await this.publish(organizationId);
        continue;
      }
      // The newest JWT at the time of sending, not at the time of asking.
      await this.inOrder(organizationId, async () => {
        const jwt = this.lastPushed.get(organizationId);
        if (jwt) await pushAccountJwt(await this.systemConnection(), jwt);
      });
    }
    return organizations.length;
  }

  /** The account JWT as the database says it should be now (also shipped to leaf nodes). */
  async currentJwt(
    organizationId: string,
  ): Promise<{ account: TenantAccount; jwt: string; revoked: number }> {
    const account = await this.load(organizationId);
    const revokedUserKeys = await this.revokedUserKeys(organizationId);
    const jwt = await tenantAccountJwt(this.secrets, {
      accountPublicKey: account.accountPublicKey,
      organizationWireId: account.organizationWireId,
      name: account.slug,
      revokedUserKeys,
    });
    return { account, jwt, revoked: Object.keys(revokedUserKeys).length };
  }

  /**
   * Keys of the organization's revoked nodes and revoked, unexpired site leaf credentials, as
   * the account JWT's revocation list (an expired site key needs no entry: the server refuses it).
   */
  private async revokedUserKeys(organizationId: string): Promise<Record<string, number>> {
    const revoked = await this.db.node.findMany({
      where: { organizationId, status: "revoked", publicKey: { not: null } },
      select: { publicKey: true },
    });
    // JWT revocation cuts off credentials issued up to this time (unix seconds): all of them.
    const now = Math.ceil(Date.now() / 1000);
    const keys: Record<string, number> = {};
    for (const node of revoked) if (node.publicKey) keys[node.publicKey] = now;
    for (const key of await revokedSiteCredentialKeys(this.db, organizationId)) keys[key] = now;
    return keys;
  }

  private async load(organizationId: string): Promise<TenantAccount> {
    let organization = await this.db.organization.findUniqueOrThrow({
      where: { id: organizationId },
      select: { natsAccountKey: true, wireId: true, slug: true },
    });
    if (!organization.natsAccountKey) {
      // Conditional update: two gateways racing on the first enrollment agree on one key.
      await this.db.organization.updateMany({
        where: { id: organizationId, natsAccountKey: null },
        data: { natsAccountKey: createAccount().getPublicKey() },
      });
      organization = await this.db.organization.findUniqueOrThrow({
        where: { id: organizationId },
        select: { natsAccountKey: true, wireId: true, slug: true },
      });
    }
    if (!organization.natsAccountKey)
      throw new Error(`organization ${organizationId} has no NATS account key`);
    return {
      organizationId,
      slug: organization.slug,
      accountPublicKey: organization.natsAccountKey,
      organizationWireId: formatWireId(organization.wireId),
    };
  }
}
