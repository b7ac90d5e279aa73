import {
  type EnrollReplyBody,
  type EnrollRequest,
  formatWireId,
  PROTOCOL_VERSION,
  verifyEnrollProof,
} from "@edgefleet/agent-sdk/protocol";
import { type Db, hashEnrollmentToken, recordEnrollmentEvents } from "@edgefleet/db";
import type { CredentialIssuer } from "../edge/credentials/credential-issuer.js";
import type { TenantAccounts } from "./tenant-accounts.js";

/** Why an enrollment was refused: the counter label, and what the agent is told. */
export const ENROLL_REJECTIONS = {
  bad_proof: "the request is not signed by the node key it names (proof of possession failed)",
  unknown_token: "enrollment token is not valid",
  expired_token: "enrollment token has expired",
  revoked_token: "enrollment token was revoked",
  used_up_token: "enrollment token has no uses left",
  revoked_node: "this node was revoked; enroll it again with a new key",
  key_in_use: "this node key is enrolled in another organization",
} as const;
export type EnrollRejection = keyof typeof ENROLL_REJECTIONS;

export type EnrollOutcome =
  | { status: "approved" | "pending"; reply: EnrollReplyBody; nodeId: string; created: boolean }
  | { status: "rejected"; reply: EnrollReplyBody; reason: EnrollRejection };

/** How long a pending agent waits before asking again. */
const PENDING_RETRY_SECONDS = 15;

export interface EnrollDeps {
  db: Db;
  accounts: TenantAccounts;
  /** Mints the node's credentials for its site (subject layout 2). */
  issuer: CredentialIssuer;
}

const reject = (reason: EnrollRejection): EnrollOutcome => ({
  status: "rejected",
  reason,
  reply: { v: PROTOCOL_VERSION, st: "rejected", err: ENROLL_REJECTIONS[reason] },
});

/**
 * Exchanges an enrollment token and the node's public key for node credentials.
 * Idempotent per node key: an agent that asks again (lost reply, pending approval) gets its
 * existing node back and does not consume another use of the token.
 */
export async function enrollNode(deps: EnrollDeps, request: EnrollRequest): Promise<EnrollOutcome> {
  const { db } = deps;
  // Before anything is looked up: nobody learns about a key (or uses a token for it) without
  // holding its seed (issue 8, #12).
  if (!verifyEnrollProof(request)) return reject("bad_proof");
  const token = await db.enrollmentToken.findUnique({
    where: { tokenHash: hashEnrollmentToken(request.tok) },
  });
  if (!token) return reject("unknown_token");

  const existing = await db.node.findUnique({ where: { publicKey: request.key } });
  if (existing) {
    if (existing.organizationId !== token.organizationId) return reject("key_in_use");
    if (existing.status === "revoked") return reject("revoked_node");
    return answer(deps, existing, false);
  }

  if (token.revokedAt) return reject("revoked_token");
  if (token.expiresAt.getTime() <= Date.now()) return reject("expired_token");

  const labels = { ...(request.lab ?? {}), ...(token.labels as Record<string, string>) };
  const name = await freeNodeName(db, token.organizationId, request.name);
  // One transaction: a use of the token is consumed only if the node really gets created,
  // and the conditional update means concurrent enrollments can never exceed maxUses.
  const node = await db.$transaction(async (tx) => {
    const consumed = await tx.enrollmentToken.updateMany({
      where: {
        id: token.id,
        revokedAt: null,
        expiresAt: { gt: new Date() },
        ...(token.maxUses === null ? {} : { uses: { lt: token.maxUses } }),
      },
      data: { uses: { increment: 1 } },
    });
    if (consumed.count === 0) return null;
    const created = await tx.node.create({
      data: {
        organizationId: token.organizationId,
        name,
        labels,
        siteId: token.siteId,
        publicKey: request.key,
        agentVersion: request.av,
        status: token.requiresApproval ? "pending" : "offline",
        enrolledAt: new Date(),
      },
    });
    // The node's first status goes into its history (and the console hears of the new node).
    await recordEnrollmentEvents(tx, [created.id]);
    return created;
  });
  if (!node) return reject("used_up_token");
  return answer(deps, node, true);
}

interface NodeForReply {
  id: string;
  organizationId: string;
  wireId: bigint;
  status: string;
  publicKey: string | null;
}

async function answer(deps: EnrollDeps, node: NodeForReply, created: boolean): Promise<EnrollOutcome> {
  if (node.status === "pending") {
    return {
      status: "pending",
      nodeId: node.id,
      created,
      reply: { v: PROTOCOL_VERSION, st: "pending", nid: node.id, retry: PENDING_RETRY_SECONDS },
    };
  }
  const account = await deps.accounts.ensure(node.organizationId);
  const wid = formatWireId(node.wireId);
  // Credentials for the node's site: the agent listens there from its first connection.
  const issued = await deps.issuer.issue(node.id, "enrollment");
  if (!issued) throw new Error(`node ${node.id} has no key to issue credentials for`);
  const jwt = issued.jwt;
  return {
    status: "approved",
    nodeId: node.id,
    created,
    reply: { v: PROTOCOL_VERSION, st: "approved", nid: node.id, wid, org: account.organizationWireId, jwt },
  };
}

/**
 * Node names are unique per organization; a clash (two boxes called "gateway") gets a suffix.
 * The wanted name is probed first (one unique-index lookup): the prefix search below cannot use
 * the (organization, name) index for its LIKE under every collation, so it would read all of
 * the organization's names for every enrollment, a cost that grows with the fleet.
 */
async function freeNodeName(db: Db, organizationId: string, wanted: string): Promise<string> {
  const clash = await db.node.findUnique({
    where: { organizationId_name: { organizationId, name: wanted } },
    select: { id: true },
  });
  if (!clash) return wanted;
  const taken = new Set(
    (
      await db.node.findMany({
        where: { organizationId, name: { startsWith: `${wanted}-` } },
        select: { name: true },
      })
    ).map((node) => node.name),
  );
  for (let suffix = 2; ; suffix++) {
    const candidate = `${wanted}-${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}
