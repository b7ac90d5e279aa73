/**
 * Alert policies of one organization (issue 12): CRUD, checked against the tenant's own sites
 * and, for PromQL, against Mimir's parser. Every change bumps the organization's alerting
 * revision; the gateway's reconciler then compiles the policies into the tenant's ruler rule
 * groups and Alertmanager config (@edgefleet/alerts) and records whether that worked.
 */
import {
  ALERT_SEVERITIES,
  type AlertPolicySpec,
  alertPolicySpecSchema,
  EVENT_POLICY_KINDS,
} from "@edgefleet/alerts";
import { Prisma } from "@edgefleet/db";
import { parseSelector, SelectorSyntaxError } from "@edgefleet/selectors";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { alertPolicyIdInput, createAlertPolicyInput, updateAlertPolicyInput } from "../schemas/alerts";
import { fieldError } from "./field-error";
import type { TenantDb } from "./nodes";

export { alertPolicyIdInput, createAlertPolicyInput, updateAlertPolicyInput };

export const alertPolicyOutput = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.string(),
  severity: z.enum(ALERT_SEVERITIES),
  spec: alertPolicySpecSchema,
  selector: z.string(),
  siteId: z.string().nullable(),
  siteName: z.string().nullable(),
  enabled: z.boolean(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type AlertPolicyOutput = z.infer<typeof alertPolicyOutput>;

const policySelect = {
  id: true,
  name: true,
  kind: true,
  severity: true,
  spec: true,
  selector: true,
  siteId: true,
  enabled: true,
  createdAt: true,
  updatedAt: true,
  site: { select: { name: true } },
} as const;

type PolicyRow = Prisma.AlertPolicyGetPayload<{ select: typeof policySelect }>;

function toOutput(row: PolicyRow): AlertPolicyOutput {
  const { site, spec, ...rest } = row;
  return { ...rest, spec: alertPolicySpecSchema.parse(spec), siteName: site?.name ?? null };
}

export async function listAlertPolicies(db: TenantDb): Promise<AlertPolicyOutput[]> {
  const rows = await db.alertPolicy.findMany({ orderBy: { name: "asc" }, select: policySelect });
  return rows.map(toOutput);
}

export async function getAlertPolicy(db: TenantDb, id: string): Promise<AlertPolicyOutput> {
  const row = await db.alertPolicy.findFirst({ where: { id }, select: policySelect });
  if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `alert policy ${id} not found` });
  return toOutput(row);
}

/** Where PromQL is checked: Mimir's own parser, for the caller's tenant. */
export interface PromqlChecker {
  /** null when the expression parses, else the parser's message. */
  problem(expr: string): Promise<string | null>;
}

/** Mimir's `format_query` endpoint parses without evaluating (cheap, no data read). */
export function mimirPromqlChecker(mimirUrl: string | null, organizationId: string): PromqlChecker {
  return {
    async problem(expr) {
      if (!mimirUrl) {
        throw new TRPCError({
          code: "INTERNAL_SERVER_ERROR",
          message: "the metrics store is not configured",
        });
      }
      let response: Response;
      try {
        response = await fetch(new URL("/prometheus/api/v1/format_query", mimirUrl), {
          method: "POST",
          headers: { "X-Scope-OrgID": organizationId, "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ query: expr }),
          signal: AbortSignal.timeout(5_000),
        });
      } catch (error) {
        throw new TRPCError({
          code: "SERVICE_UNAVAILABLE",
          message: `cannot check the PromQL now (metrics store unreachable); try again: ${error instanceof Error ? error.message : error}`,
        });
      }
      if (response.ok) return null;
      const body = (await response.json().catch(() => null)) as { error?: string } | null;
      if (response.status === 400 && body?.error)
        return body.error.replace(/^invalid parameter "query": /, "");
      throw new TRPCError({
        code: "SERVICE_UNAVAILABLE",
        message: `cannot check the PromQL now (metrics store answered ${response.status}); try again`,
      });
    },
  };
}

/** Refuses what the compiler could not turn into a rule: a bad selector, a foreign site, PromQL Mimir cannot parse. */
async function checkPolicy(
  db: TenantDb,
  promql: PromqlChecker,
  policy: { spec: AlertPolicySpec; selector: string; siteId: string | null },
) {
  if (policy.spec.kind === "promql") {
    if (policy.selector !== "")
      fieldError(["selector"], "a PromQL policy has no selector: its expression is its scope");
    if (policy.siteId !== null)
      fieldError(["siteId"], "a PromQL policy has no site: its expression is its scope");
    const problem = await promql.problem(policy.spec.expr);
    if (problem) fieldError(["spec", "expr"], `PromQL does not parse: ${problem}`);
  }
  if (EVENT_POLICY_KINDS.has(policy.spec.kind) && policy.selector !== "") {
    fieldError(["selector"], "a rollout policy has no node selector: limit it to a site, or to none");
  }
  try {
    parseSelector(policy.selector);
  } catch (error) {
    if (error instanceof SelectorSyntaxError) fieldError(["selector"], error.message);
    throw error;
  }
  if (policy.siteId !== null) {
    // Another organization's site reads as absent here (tenant-scoped client).
    const site = await db.site.findFirst({ where: { id: policy.siteId }, select: { id: true } });
    if (!site) fieldError(["siteId"], `site ${policy.siteId} not found in this organization`);
  }
}

/** The reconciler's cue: this organization's policies changed (same transaction as the change). */
export async function bumpAlertingRevision(db: TenantDb, organizationId: string): Promise<void> {
  await db.alertingState.upsert({
    where: { organizationId },
    create: { organizationId, revision: 1 },
    update: { revision: { increment: 1 } },
  });
}

function nameTaken(error: unknown, name: string | undefined): never {
  if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
    fieldError(["name"], `an alert policy named "${name}" already exists`);
  }
  throw error;
}

export async function createAlertPolicy(
  db: TenantDb,
  organizationId: string,
  promql: PromqlChecker,
  input: z.output<typeof createAlertPolicyInput>,
  createdBy: string | null,
): Promise<AlertPolicyOutput> {
  await checkPolicy(db, promql, input);
  try {
    const row = await db.alertPolicy.create({
      data: {
        organizationId,
        name: input.name,
        kind: input.spec.kind,
        spec: input.spec,
        selector: input.selector,
        siteId: input.siteId,
        severity: input.severity,
        enabled: input.enabled,
        createdBy,
      },
      select: { id: true },
    });
    await bumpAlertingRevision(db, organizationId);
    return getAlertPolicy(db, row.id);
  } catch (error) {
    nameTaken(error, input.name);
  }
}

export async function updateAlertPolicy(
  db: TenantDb,
  organizationId: string,
  promql: PromqlChecker,
  input: z.output<typeof updateAlertPolicyInput>,
) {
  const before = await getAlertPolicy(db, input.id);
  const next = {
    spec: input.spec ?? before.spec,
    selector: input.selector ?? before.selector,
    siteId: input.siteId !== undefined ? input.siteId : before.siteId,
  };
  await checkPolicy(db, promql, next);
  try {
    await db.alertPolicy.update({
      where: { id: input.id },
      data: {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.severity !== undefined ? { severity: input.severity } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
        kind: next.spec.kind,
        spec: next.spec,
        selector: next.selector,
        siteId: next.siteId,
      },
    });
  } catch (error) {
    nameTaken(error, input.name);
  }
  await bumpAlertingRevision(db, organizationId);
  return { before, after: await getAlertPolicy(db, input.id) };
}

export async function deleteAlertPolicy(db: TenantDb, organizationId: string, id: string) {
  const before = await getAlertPolicy(db, id);
  await db.alertPolicy.delete({ where: { id } });
  await bumpAlertingRevision(db, organizationId);
  return before;
}

export const alertingStatusOutput = z.object({
  /** Policy changes made / applied to Mimir (equal: in sync). */
  revision: z.number().int(),
  appliedRevision: z.number().int(),
  inSync: z.boolean(),
  appliedAt: z.date().nullable(),
  /** Why the last apply or drift repair failed (null when it worked). */
  lastError: z.string().nullable(),
  lastErrorAt: z.date().nullable(),
  checkedAt: z.date().nullable(),
});

/** Whether the organization's rules and Alertmanager config in Mimir match its policies. */
export async function alertingStatus(db: TenantDb): Promise<z.infer<typeof alertingStatusOutput>> {
  const state = await db.alertingState.findFirst({});
  if (!state) {
    return {
      revision: 0,
      appliedRevision: -1,
      inSync: false,
      appliedAt: null,
      lastError: null,
      lastErrorAt: null,
      checkedAt: null,
    };
  }
  return {
    revision: state.revision,
    appliedRevision: state.appliedRevision,
    inSync: state.appliedRevision === state.revision && state.lastError === null,
    appliedAt: state.appliedAt,
    lastError: state.lastError,
    lastErrorAt: state.lastErrorAt,
    checkedAt: state.checkedAt,
  };
}
