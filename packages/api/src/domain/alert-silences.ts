/**
 * Silences of one organization, kept by its Alertmanager (Mimir, tenant = organization): an
 * operator holds back the alerts of one site or one node for a while, and expires the silence
 * early. The site or node is checked against the organization first (a foreign one reads as
 * absent), so a silence never names another tenant's ids.
 */
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { alertSilenceIdInput, createAlertSilenceInput } from "../schemas/alerts";
import type { AlertmanagerApi, AmSilence } from "./alertmanager-api";
import { fieldError } from "./field-error";
import type { TenantDb } from "./nodes";

export { alertSilenceIdInput, createAlertSilenceInput };

export const alertSilenceOutput = z.object({
  id: z.string(),
  state: z.enum(["active", "pending", "expired"]),
  /** What it holds back: a site, a node, or other matchers (made outside the console). */
  target: z.enum(["site", "node", "other"]),
  targetId: z.string().nullable(),
  targetName: z.string(),
  startsAt: z.date(),
  endsAt: z.date(),
  createdBy: z.string(),
  comment: z.string(),
});
export type AlertSilenceOutput = z.infer<typeof alertSilenceOutput>;

/** The one equality matcher a console silence has, or null for anything else. */
function targetOf(silence: AmSilence): { label: "site_id" | "node"; value: string } | null {
  const [only, ...rest] = silence.matchers;
  if (!only || rest.length > 0 || only.isRegex || only.isEqual === false) return null;
  return only.name === "site_id" || only.name === "node" ? { label: only.name, value: only.value } : null;
}

const STATE_ORDER = { active: 0, pending: 1, expired: 2 } as const;

/** Active first, then pending, then expired (Alertmanager keeps expired ones for a few days). */
export async function listAlertSilences(
  db: TenantDb,
  alertmanager: AlertmanagerApi,
): Promise<AlertSilenceOutput[]> {
  const silences = await alertmanager.silences();
  const ids = (label: string) => silences.map(targetOf).flatMap((t) => (t?.label === label ? [t.value] : []));
  const [sites, nodes] = await Promise.all([
    db.site.findMany({ where: { id: { in: ids("site_id") } }, select: { id: true, name: true } }),
    db.node.findMany({ where: { id: { in: ids("node") } }, select: { id: true, name: true } }),
  ]);
  const names = new Map([...sites, ...nodes].map((row) => [row.id, row.name]));
  return silences
    .map((silence) => {
      const target = targetOf(silence);
      return {
        id: silence.id,
        state: silence.status.state,
        target: target
          ? target.label === "site_id"
            ? ("site" as const)
            : ("node" as const)
          : ("other" as const),
        targetId: target?.value ?? null,
        targetName: target
          ? (names.get(target.value) ?? target.value)
          : silence.matchers
              .map((m) => `${m.name}${m.isEqual === false ? "!" : ""}${m.isRegex ? "=~" : "="}"${m.value}"`)
              .join(", "),
        startsAt: new Date(silence.startsAt),
        endsAt: new Date(silence.endsAt),
        createdBy: silence.createdBy,
        comment: silence.comment,
      };
    })
    .sort(
      (a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state] || b.startsAt.getTime() - a.startsAt.getTime(),
    );
}

export async function createAlertSilence(
  db: TenantDb,
  alertmanager: AlertmanagerApi,
  input: z.output<typeof createAlertSilenceInput>,
  createdBy: string,
  now = new Date(),
): Promise<AlertSilenceOutput> {
  let matcher: { name: string; value: string };
  if (input.siteId !== undefined) {
    const site = await db.site.findFirst({ where: { id: input.siteId }, select: { id: true } });
    if (!site) fieldError(["siteId"], `site ${input.siteId} not found in this organization`);
    matcher = { name: "site_id", value: site.id };
  } else {
    const node = await db.node.findFirst({ where: { id: input.nodeId }, select: { id: true } });
    if (!node) fieldError(["nodeId"], `node ${input.nodeId} not found in this organization`);
    matcher = { name: "node", value: node.id };
  }
  const id = await alertmanager.createSilence({
    matchers: [{ ...matcher, isRegex: false, isEqual: true }],
    startsAt: now.toISOString(),
    endsAt: new Date(now.getTime() + input.durationMinutes * 60_000).toISOString(),
    createdBy,
    comment: input.comment || `silenced for ${input.durationMinutes} min from the console`,
  });
  return silenceById(db, alertmanager, id);
}

async function silenceById(db: TenantDb, alertmanager: AlertmanagerApi, id: string) {
  const found = (await listAlertSilences(db, alertmanager)).find((silence) => silence.id === id);
  if (!found) throw new TRPCError({ code: "NOT_FOUND", message: `silence ${id} not found` });
  return found;
}

/** Ends a silence now; another organization's silence is not found (its Alertmanager is another). */
export async function expireAlertSilence(
  db: TenantDb,
  alertmanager: AlertmanagerApi,
  id: string,
): Promise<{ before: AlertSilenceOutput; after: AlertSilenceOutput }> {
  if (!(await alertmanager.silence(id))) {
    throw new TRPCError({ code: "NOT_FOUND", message: `silence ${id} not found` });
  }
  const before = await silenceById(db, alertmanager, id);
  if (before.state === "expired") {
    throw new TRPCError({ code: "CONFLICT", message: `silence ${id} has already expired` });
  }
  await alertmanager.expireSilence(id);
  return { before, after: await silenceById(db, alertmanager, id) };
}
