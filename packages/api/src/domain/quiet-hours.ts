/**
 * Quiet hours per site (issue 12): a daily span in the site's time zone during which its warning
 * and info alerts are held back (critical ones still go out). Stored on the site; the gateway's
 * reconciler turns them into the organization's Alertmanager time intervals, so every change
 * bumps the alerting revision in the same transaction.
 */
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { setQuietHoursInput } from "../schemas/alerts";
import { bumpAlertingRevision } from "./alert-policies";
import type { TenantDb } from "./nodes";

export { setQuietHoursInput };

export const siteQuietHoursOutput = z.object({
  siteId: z.string(),
  siteName: z.string(),
  /** IANA zone the hours are in; null: UTC. */
  timeZone: z.string().nullable(),
  quietHours: z.object({ start: z.string(), end: z.string() }).nullable(),
});
export type SiteQuietHoursOutput = z.infer<typeof siteQuietHoursOutput>;

const select = { id: true, name: true, timeZone: true, quietHoursStart: true, quietHoursEnd: true } as const;

function toOutput(site: {
  id: string;
  name: string;
  timeZone: string | null;
  quietHoursStart: string | null;
  quietHoursEnd: string | null;
}): SiteQuietHoursOutput {
  return {
    siteId: site.id,
    siteName: site.name,
    timeZone: site.timeZone,
    quietHours:
      site.quietHoursStart && site.quietHoursEnd
        ? { start: site.quietHoursStart, end: site.quietHoursEnd }
        : null,
  };
}

/** Every site of the organization, with its quiet hours or null. */
export async function listQuietHours(db: TenantDb): Promise<SiteQuietHoursOutput[]> {
  return (await db.site.findMany({ orderBy: { name: "asc" }, select })).map(toOutput);
}

export async function setQuietHours(
  db: TenantDb,
  organizationId: string,
  input: z.output<typeof setQuietHoursInput>,
): Promise<{ before: SiteQuietHoursOutput; after: SiteQuietHoursOutput }> {
  const site = await db.site.findFirst({ where: { id: input.siteId }, select });
  if (!site) throw new TRPCError({ code: "NOT_FOUND", message: `site ${input.siteId} not found` });
  const updated = await db.site.update({
    where: { id: input.siteId },
    data: { quietHoursStart: input.quietHours?.start ?? null, quietHoursEnd: input.quietHours?.end ?? null },
    select,
  });
  await bumpAlertingRevision(db, organizationId);
  return { before: toOutput(site), after: toOutput(updated) };
}
