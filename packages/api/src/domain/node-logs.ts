/**
 * Live app logs (issue 13): the console tails an app's output through the gateway, which runs the
 * session over NATS (docs/protocol.md, "Live logs"). Who may read logs, the input bounds and the
 * mapping of refusals to errors live here; the procedures in routers/node.ts are thin.
 */
import { LOG_MAX_TAIL_LINES } from "@edgefleet/agent-sdk/commands";
import type { Role } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import {
  closeLogSession,
  type GatewayConnection,
  type LogPollAnswer,
  openLogSession,
  pollLogSession,
} from "../gateway-client";
import type { TenantDb } from "./nodes";

/**
 * Reading an app's output takes an operator: apps log what they handle (customer data, tokens
 * printed by mistake), which a viewer, who sees states and charts, is not trusted with.
 */
export const LOG_READER_ROLE: Role = "operator";

/** Byte budget of one session the console opens, at most (the node also caps it: 8 MiB). */
export const MAX_LOG_BUDGET_BYTES = 4 * 1024 * 1024;
export const DEFAULT_LOG_BUDGET_BYTES = 2 * 1024 * 1024;

export const openLogsInput = z.object({
  id: z.uuid({ error: "node id must be a UUID" }),
  app: z.string().trim().min(1).max(128),
  /** Lines of history to start with. */
  tail: z.int().min(0).max(LOG_MAX_TAIL_LINES).default(200),
  /** Keep streaming new lines (false: the history only). */
  follow: z.boolean().default(true),
  budgetBytes: z.int().min(4096).max(MAX_LOG_BUDGET_BYTES).default(DEFAULT_LOG_BUDGET_BYTES),
});

export const logSessionInput = z.object({
  id: z.uuid({ error: "node id must be a UUID" }),
  sessionId: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, "sessionId is not a log session id"),
});

export const logPollOutput = z.object({
  sessionId: z.string(),
  app: z.string(),
  /** Lines not seen by this viewer yet, oldest first (sanitized and cut to 2 KiB by the node). */
  lines: z.array(z.string()),
  /** Lines the node dropped because they came faster than the viewer read them. */
  lost: z.number().int(),
  /** Bytes of lines received so far and the session's budget. */
  bytes: z.number().int(),
  budgetBytes: z.number().int(),
  ended: z.boolean(),
  /** done, budget, cancelled, lapsed, app_gone, shutdown, viewer_left. */
  endReason: z.string().nullable(),
});
export type LogPoll = z.infer<typeof logPollOutput>;

function toPoll(answer: LogPollAnswer): LogPoll {
  const { nodeId: _nodeId, ...poll } = answer;
  return poll;
}

/** A gateway refusal (a node's or its own code) as the error a caller can act on. */
export function operationError(code: string, message: string, field?: string): TRPCError {
  switch (code) {
    case "not_found":
      return new TRPCError({ code: "NOT_FOUND", message });
    case "busy":
      return new TRPCError({ code: "TOO_MANY_REQUESTS", message });
    case "unknown_app":
      return new TRPCError({ code: "BAD_REQUEST", message: field ? `${field}: ${message}` : message });
    case "revoked":
    case "offline":
    case "unsupported":
    case "not_running":
      return new TRPCError({ code: "PRECONDITION_FAILED", message });
    case "timeout":
      return new TRPCError({ code: "TIMEOUT", message });
    case "unavailable":
      return new TRPCError({ code: "SERVICE_UNAVAILABLE", message });
    default:
      return new TRPCError({ code: "BAD_GATEWAY", message: `${code}: ${message}` });
  }
}

async function requireNode(db: TenantDb, nodeId: string): Promise<void> {
  // The tenant-scoped client: another organization's node is not found, like a missing one.
  const node = await db.node.findUnique({ where: { id: nodeId }, select: { id: true } });
  if (!node) throw new TRPCError({ code: "NOT_FOUND", message: `node ${nodeId} not found` });
}

export async function openLogs(
  db: TenantDb,
  gateway: GatewayConnection | null,
  organizationId: string,
  input: z.output<typeof openLogsInput>,
): Promise<LogPoll> {
  await requireNode(db, input.id);
  const answer = await openLogSession(gateway, {
    organizationId,
    nodeId: input.id,
    app: input.app,
    tail: input.tail,
    follow: input.follow,
    budgetBytes: input.budgetBytes,
  });
  if (!answer.ok) throw operationError(answer.code, answer.error, "app");
  return toPoll(answer.poll);
}

/** The viewer's poll; also keeps the session alive (a viewer that stops polling ends it). */
export async function pollLogs(
  gateway: GatewayConnection | null,
  organizationId: string,
  input: z.output<typeof logSessionInput>,
): Promise<LogPoll> {
  const poll = await pollLogSession(gateway, { organizationId, sessionId: input.sessionId });
  // A session id is only good for the node it was opened on (and, via the gateway, the organization).
  if (poll.nodeId !== input.id) {
    throw new TRPCError({ code: "NOT_FOUND", message: `log session ${input.sessionId} not found` });
  }
  return toPoll(poll);
}

export async function closeLogs(
  gateway: GatewayConnection | null,
  organizationId: string,
  input: z.output<typeof logSessionInput>,
): Promise<{ closed: boolean }> {
  return { closed: await closeLogSession(gateway, { organizationId, sessionId: input.sessionId }) };
}
