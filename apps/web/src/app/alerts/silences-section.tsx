"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { createAlertSilenceInput } from "@edgefleet/api/schemas";
import { useMutation, useQuery } from "@tanstack/react-query";
import { BellOffIcon } from "lucide-react";
import { useMemo } from "react";
import { z } from "zod";
import { useActionFeedback } from "~/components/action-feedback";
import { ConfirmAction } from "~/components/confirm-action";
import { actionsColumn, stateColumn, timeColumn } from "~/components/data-table/columns";
import type { DataColumn } from "~/components/data-table/data-table";
import { QueryTable } from "~/components/data-table/query-table";
import { ApiForm } from "~/components/forms/api-form";
import { SelectField, TextField } from "~/components/forms/fields";
import { useFormFeedback } from "~/components/forms/form-feedback";
import { FormFooter } from "~/components/forms/form-footer";
import { useApiForm } from "~/components/forms/use-api-form";
import { type Role, roleDenial } from "~/components/role-reason";
import { Section } from "~/components/ui/card";
import { EmptyState } from "~/components/ui/empty-state";
import { toast } from "~/components/ui/sonner";
import { useTRPC } from "~/trpc/react";
import { ALERTS_POLLING } from "./shared";

type Silence = RouterOutputs["alert"]["silences"][number];

const DURATIONS = { "60": "1 hour", "240": "4 hours", "720": "12 hours", "1440": "1 day", "10080": "1 week" };

/** One select names the target as `site:<id>` or `node:<id>`; the API's schema judges the rest. */
const silenceForm = z
  .object({
    target: z.string().min(1, "choose a site or a node"),
    durationMinutes: createAlertSilenceInput.shape.durationMinutes,
    comment: createAlertSilenceInput.shape.comment,
  })
  .transform(({ target, ...rest }) => {
    const [kind, id] = target.split(":");
    return kind === "site" ? { ...rest, siteId: id } : { ...rest, nodeId: id };
  });

const columns = (expire: (silence: Silence) => React.ReactNode): DataColumn<Silence>[] => [
  stateColumn(
    (silence) => ({ label: silence.state, variant: silence.state === "active" ? "pending" : "outline" }),
    "silence-state",
  ),
  {
    id: "target",
    accessorFn: (silence) => silence.targetName,
    meta: { title: "Silences" },
    cell: ({ row }) => (
      <span>
        <span className="text-muted-foreground">{row.original.target} </span>
        <span className="font-medium">{row.original.targetName}</span>
      </span>
    ),
  },
  { id: "comment", accessorFn: (silence) => silence.comment, meta: { title: "Comment" } },
  { id: "createdBy", accessorFn: (silence) => silence.createdBy, meta: { title: "By" } },
  timeColumn("startsAt", "From", (silence) => silence.startsAt),
  timeColumn("endsAt", "Until", (silence) => silence.endsAt),
  actionsColumn(expire),
];

const noSilences = (
  <EmptyState icon={<BellOffIcon />} title="No silences">
    Silence a site or node above, e.g. during maintenance.
  </EmptyState>
);

/** Silences of the organization's Alertmanager: create for a site or a node, expire early. */
export function SilencesSection(props: { role: Role }) {
  const trpc = useTRPC();
  const denied = roleDenial(props.role, "operator");
  const silences = useQuery(trpc.alert.silences.queryOptions(undefined, ALERTS_POLLING));
  const sites = useQuery(trpc.site.list.queryOptions());
  const nodes = useQuery(trpc.node.list.queryOptions({ limit: 200 }));
  const form = useApiForm(silenceForm, { target: "", durationMinutes: 60, comment: "" });
  const formFeedback = useFormFeedback(form, { NOT_FOUND: "target" });
  const changed = [trpc.alert.silences.pathFilter(), trpc.alert.firing.pathFilter()];
  const create = useMutation(
    trpc.alert.createSilence.mutationOptions(
      formFeedback(changed, (created) => {
        toast.success(`${created.targetName} silenced`);
        form.reset({ ...form.getValues(), comment: "" });
      }),
    ),
  );
  const feedback = useActionFeedback();
  const expire = useMutation(
    trpc.alert.expireSilence.mutationOptions(
      feedback(changed, (expired) => `Silence of ${expired.targetName} expired`),
    ),
  );
  const targets = [
    { value: "", label: "choose…" },
    ...(sites.data ?? []).flatMap((site) =>
      site.id && site.name ? [{ value: `site:${site.id}`, label: `site ${site.name}` }] : [],
    ),
    ...(nodes.data?.items ?? []).map((node) => ({ value: `node:${node.id}`, label: `node ${node.name}` })),
  ];
  const table = useMemo(
    () =>
      columns((silence) =>
        silence.state === "expired" ? null : (
          <ConfirmAction
            label="Expire"
            question={`Expire the silence of ${silence.targetName}?`}
            consequence="Its alerts are sent again from now on."
            confirmLabel="Expire"
            onConfirm={() => expire.mutate({ id: silence.id })}
            pending={expire.isPending}
            disabledReason={denied}
          />
        ),
      ),
    [denied, expire.isPending, expire.mutate],
  );
  return (
    <Section
      title="Silences"
      description="A silence holds back every alert of one site or one node until it ends; the alerts still show above."
    >
      <ApiForm form={form} label="Create a silence" noun="Silence" mutation={create}>
        <SelectField name="target" label="Site or node" accessibleName="Silence target" options={targets} />
        <SelectField name="durationMinutes" label="For" parse={Number} options={DURATIONS} />
        <TextField name="comment" label="Comment" placeholder="maintenance" />
        <FormFooter label="Silence" pendingLabel="Silencing…" disabledReason={denied} />
      </ApiForm>
      <QueryTable
        query={silences}
        label="Silences"
        columns={table}
        rowTestId="silence-row"
        rowData={(silence) => ({ name: silence.targetName, state: silence.state })}
        empty={noSilences}
      />
    </Section>
  );
}
