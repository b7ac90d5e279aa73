"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { setQuietHoursInput } from "@edgefleet/api/schemas";
import { useMutation, useQuery } from "@tanstack/react-query";
import { MoonIcon } from "lucide-react";
import { useMemo } from "react";
import { z } from "zod";
import { useActionFeedback } from "~/components/action-feedback";
import { ConfirmAction } from "~/components/confirm-action";
import { actionsColumn, textColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { ApiForm } from "~/components/forms/api-form";
import { SelectField, TextField } from "~/components/forms/fields";
import { FormFooter } from "~/components/forms/form-footer";
import { showServerError, useApiForm } from "~/components/forms/use-api-form";
import { type Role, roleDenial } from "~/components/role-reason";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { useTRPC } from "~/trpc/react";
import { ALERTS_POLLING } from "./shared";

type SiteQuiet = RouterOutputs["alert"]["quietHours"][number];

/** The API's input, with start and end as two fields of the form (the API nests them). */
const quietForm = z
  .object({ siteId: z.string().min(1, "choose a site"), start: z.string(), end: z.string() })
  .transform((values, ctx) => {
    const parsed = setQuietHoursInput.safeParse({
      siteId: values.siteId,
      quietHours: { start: values.start, end: values.end },
    });
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) {
      const field =
        issue.path.at(-1) === "start" || issue.path.at(-1) === "end" ? issue.path.at(-1) : "siteId";
      ctx.addIssue({ code: "custom", path: [field as string], message: issue.message });
    }
    return z.NEVER;
  });

const noSites = (
  <EmptyState icon={<MoonIcon />} title="No sites">
    Quiet hours belong to a site; create one on the Sites page.
  </EmptyState>
);

/** Quiet hours per site, in the site's time zone: warning and info alerts wait, critical ones do not. */
export function QuietHoursSection(props: { role: Role }) {
  const trpc = useTRPC();
  const denied = roleDenial(props.role, "operator");
  const sites = useQuery(trpc.alert.quietHours.queryOptions(undefined, ALERTS_POLLING));
  const form = useApiForm(quietForm, { siteId: "", start: "22:00", end: "06:00" });
  const feedback = useActionFeedback();
  const changed = feedback(trpc.alert.quietHours.pathFilter(), (site: SiteQuiet) =>
    site.quietHours ? `Quiet hours of ${site.siteName} set` : `Quiet hours of ${site.siteName} removed`,
  );
  const set = useMutation(
    trpc.alert.setQuietHours.mutationOptions({
      onSuccess: changed.onSuccess,
      onError: (error) => showServerError(form, error, { NOT_FOUND: "siteId" }),
    }),
  );
  const clear = useMutation(trpc.alert.setQuietHours.mutationOptions(changed));
  const table = useMemo<DataColumn<SiteQuiet>[]>(
    () => [
      { id: "site", accessorFn: (site) => site.siteName, meta: { title: "Site" } },
      textColumn(
        "hours",
        "Quiet hours",
        (site) => (site.quietHours ? `${site.quietHours.start}–${site.quietHours.end}` : null),
        { none: "none", className: "tabular-nums" },
      ),
      { id: "zone", accessorFn: (site) => site.timeZone ?? "UTC", meta: { title: "Time zone" } },
      actionsColumn((site) =>
        site.quietHours ? (
          <ConfirmAction
            label="Remove"
            question={`Remove the quiet hours of ${site.siteName}?`}
            consequence="Its warning and info alerts are sent at any hour again."
            confirmLabel="Remove"
            onConfirm={() => clear.mutate({ siteId: site.siteId, quietHours: null })}
            pending={clear.isPending}
            disabledReason={denied}
          />
        ) : null,
      ),
    ],
    [denied, clear.isPending, clear.mutate],
  );
  const siteOptions = [
    { value: "", label: "choose…" },
    ...(sites.data ?? []).map((site) => ({ value: site.siteId, label: site.siteName })),
  ];
  return (
    <Section
      title="Quiet hours"
      description="Every day in the site's own time zone (set on the site's page), its warning and info alerts wait until the quiet hours end; critical alerts are always sent."
    >
      <ApiForm form={form} label="Set quiet hours" noun="Quiet hours" mutation={set}>
        <SelectField name="siteId" label="Site" options={siteOptions} />
        <TextField
          name="start"
          label="From"
          accessibleName="Quiet from"
          placeholder="22:00"
          inputMode="numeric"
        />
        <TextField
          name="end"
          label="Until"
          accessibleName="Quiet until"
          placeholder="06:00"
          inputMode="numeric"
        />
        <FormFooter label="Set quiet hours" pendingLabel="Saving…" disabledReason={denied} />
      </ApiForm>
      <QueryTable
        query={sites}
        label="Quiet hours"
        columns={table}
        getRowId={(site) => site.siteId}
        rowTestId="quiet-row"
        rowData={(site) => ({ name: site.siteName })}
        empty={noSites}
      />
    </Section>
  );
}
