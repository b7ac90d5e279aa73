/**
 * Network probes (issue 13): an on-demand throughput probe from a node to its site's leaf server
 * or to the hub, run by the gateway (docs/protocol.md, "Network probes"), stored as NetworkProbe
 * rows and charted on the node and site pages.
 *
 * Rollout budgets: a probe to the hub crosses the site's uplink, which a moving rollout with a
 * per-site byte budget (strategy.siteBandwidth.bytesPerSecond) already fills up to that budget by
 * design (the gateway paces to it). Such a probe is refused while the rollout moves, naming it; a
 * probe to the site's own leaf does not cross the uplink and is always allowed.
 */
import { PROBE_MAX_BYTES, PROBE_MAX_MS, PROBE_TARGETS } from "@edgefleet/agent-sdk/commands";
import type { Role } from "@edgefleet/db";
import { type SiteBandwidth, siteUplinkBudget } from "@edgefleet/rollout";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { type GatewayConnection, runNodeProbe } from "../gateway-client";
import { operationError } from "./node-logs";
import type { TenantDb } from "./nodes";

/** A probe fills the node's link on purpose: an operator's decision. Results are readable by viewers. */
export const PROBE_ROLE: Role = "operator";

export const runProbeInput = z.object({
  id: z.uuid({ error: "node id must be a UUID" }),
  target: z.enum(PROBE_TARGETS),
  /** Bytes to send at most (default 1 MiB) and seconds to take at most (default 5). */
  bytes: z
    .int()
    .min(16 * 1024)
    .max(PROBE_MAX_BYTES)
    .default(1024 * 1024),
  seconds: z
    .int()
    .min(1)
    .max(PROBE_MAX_MS / 1000)
    .default(5),
});

export const probeOutput = z.object({
  id: z.string(),
  nodeId: z.string(),
  target: z.enum(PROBE_TARGETS),
  ok: z.boolean(),
  bytes: z.number().int(),
  durationMs: z.number().int(),
  /** Bytes per second (0 when the probe failed). */
  bytesPerSecond: z.number().int(),
  code: z.string().nullable(),
  error: z.string().nullable(),
  via: z.string().nullable(),
  requestedBy: z.string().nullable(),
  createdAt: z.date(),
});
export type Probe = z.infer<typeof probeOutput>;

export const listProbesInput = z.object({
  id: z.uuid({ error: "node id must be a UUID" }),
  limit: z.int().min(1).max(200).default(50),
});

export const siteProbesInput = z.object({
  id: z.uuid({ error: "site id must be a UUID" }),
  /** Each node's latest probes per target, at most this many. */
  perNode: z.int().min(1).max(20).default(5),
});

export const siteProbesOutput = z.object({
  nodes: z.array(
    z.object({
      nodeId: z.string(),
      nodeName: z.string(),
      /** Latest successful probe's bytes per second, per target; null without one. */
      leafBytesPerSecond: z.number().int().nullable(),
      hubBytesPerSecond: z.number().int().nullable(),
      probes: z.array(probeOutput),
    }),
  ),
});

type ProbeRow = {
  id: string;
  nodeId: string;
  target: "leaf" | "hub";
  ok: boolean;
  bytes: number;
  durationMs: number;
  code: string | null;
  error: string | null;
  via: string | null;
  requestedBy: string | null;
  createdAt: Date;
};

function toProbe(row: ProbeRow): Probe {
  return {
    ...row,
    bytesPerSecond: row.ok && row.durationMs > 0 ? Math.round((row.bytes * 1000) / row.durationMs) : 0,
  };
}

/**
 * Runs a probe and stores what it measured, or why it failed once it reached the node (timeout, the
 * node's failure). What never started (not found, offline, a limit) is an error, not a row.
 */
export async function runProbe(
  db: TenantDb,
  gateway: GatewayConnection | null,
  organizationId: string,
  requestedBy: string,
  input: z.output<typeof runProbeInput>,
): Promise<Probe> {
  const node = await db.node.findUnique({ where: { id: input.id }, select: { id: true, siteId: true } });
  if (!node) throw new TRPCError({ code: "NOT_FOUND", message: `node ${input.id} not found` });
  if (input.target === "hub" && node.siteId) {
    const holder = await uplinkBudgetHolder(db, node.siteId);
    if (holder) {
      throw new TRPCError({
        code: "PRECONDITION_FAILED",
        message: `target: the site's uplink is budgeted to rollout ${holder.rolloutId} (${holder.bytesPerSecond} bytes/s) while it moves; probe the leaf instead, or after the rollout`,
      });
    }
  }
  const answer = await runNodeProbe(gateway, {
    organizationId,
    nodeId: input.id,
    to: input.target,
    bytes: input.bytes,
    ms: input.seconds * 1000,
  });
  if (!answer.ok && ["not_found", "revoked", "offline", "busy", "unavailable"].includes(answer.code)) {
    throw operationError(answer.code, answer.error);
  }
  const row = await db.networkProbe.create({
    data: {
      organizationId,
      nodeId: input.id,
      target: input.target,
      ok: answer.ok,
      bytes: answer.ok ? answer.result.prb.by : 0,
      durationMs: answer.ok ? answer.result.prb.ms : answer.ms,
      code: answer.ok ? null : answer.code,
      error: answer.ok ? null : answer.error.slice(0, 500),
      via: answer.ok ? (answer.result.prb.via ?? null) : null,
      requestedBy: requestedBy.slice(0, 200),
    },
  });
  return toProbe(row);
}

/** Rollout states in which the gateway moves artifact bytes over sites' uplinks. */
const MOVING_ROLLOUT_STATUSES = ["running", "rolling_back"] as const;

/** The moving rollout, if any, that holds this site's uplink to a byte budget. */
export async function uplinkBudgetHolder(
  db: TenantDb,
  siteId: string,
): Promise<{ rolloutId: string; bytesPerSecond: number } | null> {
  const rollouts = await db.rollout.findMany({
    where: { status: { in: [...MOVING_ROLLOUT_STATUSES] } },
    select: { id: true, strategy: true, siteIds: true },
  });
  const budgeted = rollouts.flatMap((rollout) => {
    if (rollout.siteIds.length > 0 && !rollout.siteIds.includes(siteId)) return [];
    const strategy = rollout.strategy as { siteBandwidth?: SiteBandwidth };
    const { bytesPerSecond } = siteUplinkBudget(strategy, siteId);
    return bytesPerSecond === undefined ? [] : [{ rolloutId: rollout.id, bytesPerSecond }];
  });
  if (budgeted.length === 0) return null;
  // Only a rollout that has nodes of this site in it moves bytes over this uplink.
  const siteNodes = await db.node.findMany({ where: { siteId }, select: { id: true } });
  const touching = await db.rolloutNode.findFirst({
    where: {
      rolloutId: { in: budgeted.map((b) => b.rolloutId) },
      nodeId: { in: siteNodes.map((n) => n.id) },
    },
    select: { rolloutId: true },
  });
  return budgeted.find((b) => b.rolloutId === touching?.rolloutId) ?? null;
}

export async function listProbes(db: TenantDb, input: z.output<typeof listProbesInput>): Promise<Probe[]> {
  const rows = await db.networkProbe.findMany({
    where: { nodeId: input.id },
    orderBy: { createdAt: "desc" },
    take: input.limit,
  });
  return rows.map(toProbe);
}

/** The site's nodes side by side: each one's latest probes and its latest throughput per target. */
export async function siteProbes(
  db: TenantDb,
  input: z.output<typeof siteProbesInput>,
): Promise<z.infer<typeof siteProbesOutput>> {
  const site = await db.site.findUnique({ where: { id: input.id }, select: { id: true } });
  if (!site) throw new TRPCError({ code: "NOT_FOUND", message: `site ${input.id} not found` });
  const nodes = await db.node.findMany({
    where: { siteId: input.id },
    select: {
      id: true,
      name: true,
      networkProbes: { orderBy: { createdAt: "desc" }, take: input.perNode * 2 },
    },
    orderBy: { name: "asc" },
    take: 500,
  });
  return {
    nodes: nodes.map((node) => {
      const probes = node.networkProbes.map(toProbe);
      const latest = (target: "leaf" | "hub") =>
        probes.find((probe) => probe.ok && probe.target === target)?.bytesPerSecond ?? null;
      return {
        nodeId: node.id,
        nodeName: node.name,
        leafBytesPerSecond: latest("leaf"),
        hubBytesPerSecond: latest("hub"),
        probes,
      };
    }),
  };
}
