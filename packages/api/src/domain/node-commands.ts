/**
 * Node operations (issue 13): commands to nodes, run by the gateway over NATS (the console's API
 * holds no NATS credentials) and answered per node. Who may run what and the readable shape of
 * the nodes' answers live here, the input bounds in schemas/node-commands.ts (the console's command
 * form judges with them too); the procedures in routers/node.ts are thin.
 */
import { COMMANDS, type Command } from "@edgefleet/agent-sdk/commands";
import type { Role } from "@edgefleet/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { type GatewayConnection, type NodeCommandAnswer, runNodeCommand } from "../gateway-client";
import { bulkNodeCommandInput, MAX_COMMAND_NODES, nodeCommandInput } from "../schemas/node-commands";
import type { TenantDb } from "./nodes";
import { roleAtLeast } from "./roles";

export type { Command };
export { bulkNodeCommandInput, COMMANDS, MAX_COMMAND_NODES, nodeCommandInput };

/**
 * The least role per command. Viewers run none: every command acts on a node or costs its link.
 * Stopping an app leaves it down until somebody starts it again, so it takes an admin; the rest
 * (restart, start, re-run a health check, diagnostics, a forced report) an operator.
 */
export const COMMAND_ROLES: Record<Command, Role> = {
  restart: "operator",
  stop: "admin",
  start: "operator",
  health: "operator",
  diag: "operator",
  report: "operator",
};

const instanceOutput = z.object({
  app: z.string(),
  version: z.string().nullable(),
  state: z.string(),
  reason: z.string().nullable(),
  restarts: z.number().int(),
});

export const diagnosticsOutput = z.object({
  agentVersion: z.string(),
  os: z.string(),
  arch: z.string(),
  uptimeSeconds: z.number().int(),
  /** The agent's settings, secrets left out by the agent. */
  settings: z.record(z.string(), z.string()),
  diskUsedBytes: z.number(),
  diskTotalBytes: z.number(),
  /** The agent's recent log, oldest first. */
  log: z.array(z.string()),
  apps: z.array(instanceOutput),
});

export const commandResultOutput = z.object({
  nodeId: z.string(),
  /** null when the node is not in this organization. */
  nodeName: z.string().nullable(),
  ok: z.boolean(),
  /**
   * Why not: the gateway's `not_found`, `revoked`, `offline`, `busy` (a concurrency limit),
   * `timeout`, `bad_reply`, `unavailable`, or the node's `unknown_app`, `not_running`,
   * `no_health_check`, `unsupported`, `failed`.
   */
  code: z.string().nullable(),
  error: z.string().nullable(),
  durationMs: z.number().int(),
  instance: instanceOutput.nullable(),
  health: z.object({ healthy: z.boolean(), reason: z.string().nullable() }).nullable(),
  report: z.object({ statusSeq: z.number().int(), metricsSeq: z.number().int() }).nullable(),
  diagnostics: diagnosticsOutput.nullable(),
});
export type CommandResult = z.infer<typeof commandResultOutput>;

export const commandRunOutput = z.object({
  command: z.enum(COMMANDS),
  app: z.string().nullable(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  results: z.array(commandResultOutput),
});
export type CommandRun = z.infer<typeof commandRunOutput>;

/** FORBIDDEN unless `role` may run `command`. */
export function requireCommandRole(role: Role, command: Command): void {
  const needed = COMMAND_ROLES[command];
  if (!roleAtLeast(role, needed)) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: `${command} needs the ${needed} role; you are ${role}`,
    });
  }
}

/** Runs one command on nodes of the organization; one result per node, in the order asked. */
export async function runCommandOnNodes(
  db: TenantDb,
  gateway: GatewayConnection | null,
  organizationId: string,
  input: { nodeIds: string[]; command: Command; app?: string | undefined; timeoutSeconds: number },
): Promise<CommandRun> {
  const nodeIds = [...new Set(input.nodeIds)];
  const answers = await runNodeCommand(gateway, {
    organizationId,
    nodeIds,
    cmd: input.command,
    ...(input.app !== undefined ? { app: input.app } : {}),
    timeoutMs: input.timeoutSeconds * 1000,
  });
  // Names only of this organization's nodes (the tenant-scoped client): another's stays unnamed.
  const names = new Map(
    (await db.node.findMany({ where: { id: { in: nodeIds } }, select: { id: true, name: true } })).map(
      (node) => [node.id, node.name],
    ),
  );
  const byNode = new Map(answers.map((answer) => [answer.nodeId, answer]));
  const results = nodeIds.map((nodeId) => toResult(nodeId, names.get(nodeId) ?? null, byNode.get(nodeId)));
  const succeeded = results.filter((result) => result.ok).length;
  return {
    command: input.command,
    app: input.app ?? null,
    succeeded,
    failed: results.length - succeeded,
    results,
  };
}

function toResult(
  nodeId: string,
  nodeName: string | null,
  answer: NodeCommandAnswer | undefined,
): CommandResult {
  const empty = { instance: null, health: null, report: null, diagnostics: null };
  if (!answer) {
    return {
      nodeId,
      nodeName,
      ok: false,
      code: "unavailable",
      error: "the gateway gave no answer for this node",
      durationMs: 0,
      ...empty,
    };
  }
  if (!answer.ok) {
    return {
      nodeId,
      nodeName,
      ok: false,
      code: answer.code,
      error: answer.error,
      durationMs: answer.ms,
      ...empty,
    };
  }
  const { inst, hl, rep, diag } = answer.result;
  return {
    nodeId,
    nodeName,
    ok: true,
    code: null,
    error: null,
    durationMs: answer.ms,
    instance: inst ? instance(inst) : null,
    health: hl ? { healthy: hl.ok, reason: hl.why ?? null } : null,
    report: rep ? { statusSeq: rep.st, metricsSeq: rep.mx } : null,
    diagnostics: diag
      ? {
          agentVersion: diag.av,
          os: diag.os,
          arch: diag.arch,
          uptimeSeconds: diag.up,
          settings: diag.cfg,
          diskUsedBytes: diag.du,
          diskTotalBytes: diag.dt,
          log: diag.log,
          apps: diag.inst.map(instance),
        }
      : null,
  };
}

function instance(inst: {
  app: string;
  ver?: string | undefined;
  st: string;
  why?: string | undefined;
  rs: number;
}) {
  return {
    app: inst.app,
    version: inst.ver ?? null,
    state: inst.st,
    reason: inst.why ?? null,
    restarts: inst.rs,
  };
}

/** What the audit row keeps of a run: who was asked what, and each node's outcome (no bundle). */
export function auditOfRun(run: CommandRun) {
  return {
    command: run.command,
    app: run.app,
    succeeded: run.succeeded,
    failed: run.failed,
    results: run.results.map((result) => ({ nodeId: result.nodeId, ok: result.ok, code: result.code })),
  };
}
