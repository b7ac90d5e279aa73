/**
 * Enrollment tokens (the secret an agent trades for node credentials) and node approval and
 * revocation. Tokens are created by @edgefleet/db's createEnrollmentToken (secret shown once,
 * SHA-256 stored); approval and revocation use approveNode / revokeNode, which the gateway
 * listens to.
 */
import { approveNode, createEnrollmentToken, type Db, revokeNode, tenantDb } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import {
  createTokenInput,
  tokenLabelsSchema as labelsSchema,
  listTokensInput,
  MAX_TOKEN_LIFETIME_HOURS,
  nodeIdInput,
  tokenIdInput,
} from "../schemas/enrollment";

// Input schemas live in ../schemas (zod only) so the console can validate with them too.
export {
  createTokenInput,
  labelsSchema,
  listTokensInput,
  MAX_TOKEN_LIFETIME_HOURS,
  nodeIdInput,
  tokenIdInput,
};

type TenantDb = ReturnType<typeof tenantDb>;

export const enrollmentTokenSummary = z.object({
  id: z.string(),
  description: z.string().nullable(),
  expiresAt: z.date(),
  maxUses: z.number().int().nullable(),
  uses: z.number().int(),
  labels: z.record(z.string(), z.string()),
  requiresApproval: z.boolean(),
  /** Where nodes enrolled with it are placed; null: no site. */
  site: z.object({ id: z.string(), name: z.string() }).nullable(),
  revokedAt: z.date().nullable(),
  createdBy: z.string().nullable(),
  createdAt: z.date(),
  /** Derived: usable = not revoked, not expired, uses left. */
  usable: z.boolean(),
});
export type EnrollmentTokenSummary = z.infer<typeof enrollmentTokenSummary>;

const tokenSelect = {
  id: true,
  description: true,
  expiresAt: true,
  maxUses: true,
  uses: true,
  labels: true,
  requiresApproval: true,
  site: { select: { id: true, name: true } },
  revokedAt: true,
  createdBy: true,
  createdAt: true,
} as const;

type TokenRow = Omit<EnrollmentTokenSummary, "labels" | "usable"> & { labels: unknown };

function toSummary(row: TokenRow, now: Date): EnrollmentTokenSummary {
  const usable = !row.revokedAt && row.expiresAt > now && (row.maxUses === null || row.uses < row.maxUses);
  return { ...row, labels: z.record(z.string(), z.string()).parse(row.labels), usable };
}

export const listTokensOutput = z.object({
  items: z.array(enrollmentTokenSummary),
  nextCursor: z.string().nullable(),
});

/** Newest first. */
export async function listTokens(db: TenantDb, input: z.output<typeof listTokensInput>, now = new Date()) {
  const rows = await db.enrollmentToken.findMany({
    where: input.cursor ? { id: { lt: input.cursor } } : {},
    orderBy: { id: "desc" },
    take: input.limit + 1,
    select: tokenSelect,
  });
  const page = rows.slice(0, input.limit);
  return {
    items: page.map((row) => toSummary(row, now)),
    nextCursor: rows.length > input.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

export const createdToken = enrollmentTokenSummary.extend({
  /** The secret, shown only in this response. */
  token: z.string(),
  /** One line that writes the agent config and starts the agent on a node. */
  installCommand: z.string(),
});

/** Where agents connect when the deployment did not say (the site's leaf node, by convention). */
export const DEFAULT_AGENT_SERVER_URL = "nats://leaf.site.local:4222";

/** Where the install command puts things on the node (the paths of apps/agent/packaging's unit). */
const AGENT_CONFIG_PATH = "/etc/edgefleet/agent.yaml";
const ENROLL_CREDS_PATH = "/etc/edgefleet/enroll.creds";
const AGENT_BINARY_PATH = "/usr/local/bin/edgefleet-agent";
const AGENT_UNIT_PATH = "/etc/systemd/system/edgefleet-agent.service";

/** Text as a printf format inside single quotes: one line, nothing printf or the shell would interpret. */
function printfLiteral(text: string): string {
  return text.replaceAll("\\", "\\\\").replaceAll("%", "%%").replaceAll("'", "'\\''").replaceAll("\n", "\\n");
}

/** A word the shell takes literally. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** Where the agent connects and where its binary comes from. */
export interface AgentInstallTarget {
  /** NATS URL agents connect to (a site's leaf node, or the hub's leaf port). */
  serverUrl: string;
  /**
   * Base URL of the native agent's release binaries and systemd unit (the console's
   * /downloads/agent); null when the deployment does not serve them: the command then expects
   * the agent and its unit to be installed already.
   */
  downloadUrl: string | null;
}

/**
 * A shell one-liner for a Linux node: downloads the native agent for the node's architecture and
 * its systemd unit, writes the agent config (and the public enrollment credentials, when the hub
 * asks for them) to /etc/edgefleet, and starts the agent as a service (see apps/agent/README.md).
 */
export function installCommand(
  token: string,
  target: AgentInstallTarget,
  enrollCreds: string | null = null,
): string {
  const config = [
    "stateDir: /var/lib/edgefleet-agent",
    `servers: ["${target.serverUrl}"]`,
    "enroll:",
    `  token: ${token}`,
    ...(enrollCreds ? [`  credsFile: ${ENROLL_CREDS_PATH}`] : []),
  ].join("\n");
  const base = target.downloadUrl?.replace(/\/+$/, "");
  return [
    ...(base
      ? [
          // uname's names for the three architectures the agent is built for (build.sh --release).
          "ARCH=$(uname -m | sed 's/x86_64/amd64/;s/aarch64/arm64/;s/armv7.*/armv7/')",
          `sudo curl -fsSL -o ${AGENT_BINARY_PATH} ${shellQuote(`${base}/edgefleet-agent-linux-`)}"$ARCH"`,
          `sudo chmod 0755 ${AGENT_BINARY_PATH}`,
          `sudo curl -fsSL -o ${AGENT_UNIT_PATH} ${shellQuote(`${base}/edgefleet-agent.service`)}`,
        ]
      : []),
    "sudo mkdir -p /etc/edgefleet",
    ...(enrollCreds
      ? [`printf -- '${printfLiteral(enrollCreds)}' | sudo tee ${ENROLL_CREDS_PATH} >/dev/null`]
      : []),
    `printf -- '${printfLiteral(config)}\\n' | sudo tee ${AGENT_CONFIG_PATH} >/dev/null`,
    "sudo systemctl daemon-reload",
    "sudo systemctl enable --now edgefleet-agent",
  ].join(" && ");
}

export async function createToken(
  db: Db,
  organizationId: string,
  createdBy: string,
  input: z.output<typeof createTokenInput>,
  agent: AgentInstallTarget,
  enrollCreds: string | null,
  now = new Date(),
) {
  const site = input.siteId
    ? await tenantDb(db, organizationId).site.findFirst({
        where: { id: input.siteId },
        select: { name: true },
      })
    : null;
  if (input.siteId && !site) {
    throw new TRPCError({ code: "NOT_FOUND", message: `site ${input.siteId} not found` });
  }
  const created = await createEnrollmentToken(db, organizationId, {
    expiresAt: new Date(now.getTime() + input.expiresInHours * 3_600_000),
    maxUses: input.maxUses ?? null,
    // The site label keeps `site=<name>` selectors working for enrolled nodes, as for seeded ones;
    // it follows the chosen site even if the labels say otherwise.
    labels: site ? { ...input.labels, site: site.name } : input.labels,
    requiresApproval: input.requiresApproval,
    siteId: input.siteId ?? null,
    ...(input.description ? { description: input.description } : {}),
    createdBy,
  });
  const row = await db.enrollmentToken.findUniqueOrThrow({ where: { id: created.id }, select: tokenSelect });
  const summary = toSummary(row, now);
  return {
    summary,
    token: created.token,
    installCommand: installCommand(created.token, agent, enrollCreds),
  };
}

/** One token, revoked or not; its secret is never readable again. */
export async function getToken(db: TenantDb, id: string, now = new Date()): Promise<EnrollmentTokenSummary> {
  const row = await db.enrollmentToken.findFirst({ where: { id }, select: tokenSelect });
  if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `enrollment token ${id} not found` });
  return toSummary(row, now);
}

export async function revokeToken(db: TenantDb, id: string, now = new Date()) {
  const row = await db.enrollmentToken.findFirst({ where: { id }, select: tokenSelect });
  if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `enrollment token ${id} not found` });
  const before = toSummary(row, now);
  if (row.revokedAt) return { before, after: before };
  const updated = await db.enrollmentToken.update({
    where: { id },
    data: { revokedAt: now },
    select: tokenSelect,
  });
  return { before, after: toSummary(updated, now) };
}

export const nodeLifecycleOutput = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(["pending", "online", "offline", "revoked"]),
  revokedAt: z.date().nullable(),
});
export type NodeLifecycleState = z.infer<typeof nodeLifecycleOutput>;

async function nodeState(db: TenantDb, nodeId: string): Promise<NodeLifecycleState> {
  const node = await db.node.findFirst({
    where: { id: nodeId },
    select: { id: true, name: true, status: true, revokedAt: true },
  });
  if (!node) throw new TRPCError({ code: "NOT_FOUND", message: `node ${nodeId} not found` });
  return node;
}

/** Approves a pending node; CONFLICT for a node that is not pending. */
export async function approve(db: Db, scoped: TenantDb, organizationId: string, nodeId: string) {
  const before = await nodeState(scoped, nodeId);
  if (!(await approveNode(db, organizationId, nodeId))) {
    throw new TRPCError({
      code: "CONFLICT",
      message: `node ${before.name} is ${before.status}, not pending`,
    });
  }
  return { before, after: await nodeState(scoped, nodeId) };
}

/** Revokes a node (idempotent: revoking a revoked node changes nothing). */
export async function revoke(db: Db, scoped: TenantDb, organizationId: string, nodeId: string) {
  const before = await nodeState(scoped, nodeId);
  await revokeNode(db, organizationId, nodeId);
  return { before, after: await nodeState(scoped, nodeId) };
}
